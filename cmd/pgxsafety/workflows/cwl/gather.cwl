#!/usr/bin/env cwl-runner
# Concatenates the chunks' calls tables in chunk order (only the first has
# the header) and puts every chunk's per-sample answers in one directory;
# two answers of the same file name stop the job.
cwlVersion: v1.2
class: CommandLineTool
label: gather the chunks' calls tables and per-sample answers
baseCommand: [sh, -c]
arguments:
  - position: 1
    valueFrom: |
      set -eu
      : > calls.tsv
      mkdir per-sample
      dirs=0
      for a in "$@"; do
        if [ "$a" = "--dirs" ]; then dirs=1; continue; fi
        if [ "$dirs" = 0 ]; then cat "$a" >> calls.tsv; continue; fi
        for f in "$a"/*; do
          [ -e "$f" ] || continue
          b=`basename "$f"`
          if [ -e "per-sample/$b" ]; then echo "two answers are named per-sample/$b" >&2; exit 1; fi
          cp "$f" "per-sample/$b"
        done
      done
  - position: 2
    valueFrom: gather
  - position: 4
    valueFrom: --dirs
inputs:
  tables:
    type: File[]
    inputBinding:
      position: 3
  dirs:
    type: Directory[]
    inputBinding:
      position: 5
outputs:
  calls_table:
    type: File
    outputBinding:
      glob: calls.tsv
  per_sample:
    type: Directory
    outputBinding:
      glob: per-sample
