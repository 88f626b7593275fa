package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// loadBase returns the embedded knowledge, the engine's and the
// classifier's (loaded, validated and indexed once per process). When it
// has problems it prints every one to stderr and returns an error.
func loadBase(stderr io.Writer) (*knowledge.Base, error) {
	b, err := knowledge.DefaultBase()
	if err != nil {
		reportLoadError(stderr, "embedded knowledge", err)
		return nil, fmt.Errorf("the embedded knowledge does not load (%s)", problemCount(err))
	}
	return b, nil
}

// loadKnowledge is loadBase for a command that needs only the evaluation
// engine (and its knowledge).
func loadKnowledge(stderr io.Writer) (*evaluate.Engine, error) {
	b, err := loadBase(stderr)
	if err != nil {
		return nil, err
	}
	return b.Evaluator, nil
}

// reportLoadError prints every problem of a knowledge load error, one per
// line, or the error itself when it is not a list of problems.
func reportLoadError(w io.Writer, what string, err error) {
	problems := knowledge.Problems(err)
	if len(problems) == 0 {
		fmt.Fprintf(w, "%s: %v\n", what, err)
		return
	}
	for _, p := range problems {
		fmt.Fprintln(w, p.String())
	}
}

func problemCount(err error) string {
	if n := len(knowledge.Problems(err)); n > 0 {
		return fmt.Sprintf("%d problems", n)
	}
	return err.Error()
}

func runKnowledge(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("knowledge: want a subcommand: validate or stats")
	}
	switch args[0] {
	case "validate":
		return runKnowledgeValidate(args[1:], stdout, stderr)
	case "stats":
		fs := newFlagSet("knowledge stats", stderr, "knowledge stats [--json]")
		asJSON := fs.Bool("json", false, "print the statistics as JSON")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		b, err := loadBase(stderr)
		if err != nil {
			return err
		}
		stats := knowledge.Stats(b)
		if !*asJSON {
			return stats.WriteText(stdout)
		}
		out, err := json.MarshalIndent(stats, "", "  ")
		if err != nil {
			return fmt.Errorf("encode stats: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", out)
		return err
	default:
		return usageError("knowledge: unknown subcommand %q (want validate or stats)", args[0])
	}
}

func runKnowledgeValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("knowledge validate", stderr, "knowledge validate [--dir DIR]")
	dir := fs.String("dir", "", "validate the knowledge files in DIR instead of the embedded ones")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var (
		kb   *evaluate.Engine
		err  error
		what = "embedded knowledge"
	)
	if *dir != "" {
		what = *dir
		kb, err = knowledge.LoadFS(os.DirFS(*dir))
	} else {
		kb, err = knowledge.Load()
	}
	if err != nil {
		reportLoadError(stdout, what, err)
		return fmt.Errorf("%s: %s", what, problemCount(err))
	}
	fmt.Fprintf(stdout, "%s: no problems (knowledge %s)\n", what, kb.Version.Label)
	return nil
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr, "version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kb, err := loadKnowledge(stderr)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "engine     %s\napi        %s\nknowledge  %s\ngo         %s\n",
		pgxapi.EngineVersion, pgxapi.APIVersion, kb.Version.Label, runtime.Version())
	return err
}
