package pgxapi

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// The browsable API reference: GET /docs renders the embedded OpenAPI
// document as one HTML page on the server (html/template), with no script
// and nothing fetched from elsewhere: every operation grouped by tag with
// its parameters, body and responses, and every schema with its fields,
// linked to each other.

//go:embed templates/apidocs.html templates/apidocs.css
var apiDocsFS embed.FS

var (
	apiDocsCSS = mustReadFS(apiDocsFS, "templates/apidocs.css")
	// apiDocsCSP allows exactly the inline style sheet.
	apiDocsCSP = "default-src 'none'; style-src " + httpx.CSPHashSource(apiDocsCSS) + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	apiDocsTpl = template.Must(template.New("apidocs.html").ParseFS(apiDocsFS, "templates/apidocs.html"))
)

func mustReadFS(fsys embed.FS, name string) string {
	b, err := fsys.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// oaSchema is the part of an OpenAPI schema object the page shows.
type oaSchema struct {
	Ref         string               `json:"$ref"`
	Type        any                  `json:"type"` // a name or a list of names (3.1)
	Description string               `json:"description"`
	Format      string               `json:"format"`
	Enum        []any                `json:"enum"`
	Const       any                  `json:"const"`
	Items       *oaSchema            `json:"items"`
	Properties  map[string]*oaSchema `json:"properties"`
	Required    []string             `json:"required"`
	OneOf       []*oaSchema          `json:"oneOf"`
	AnyOf       []*oaSchema          `json:"anyOf"`
	AllOf       []*oaSchema          `json:"allOf"`
	Additional  any                  `json:"additionalProperties"`
	Minimum     *float64             `json:"minimum"`
	Maximum     *float64             `json:"maximum"`
}

type oaMedia struct {
	Schema *oaSchema `json:"schema"`
}

type oaResponse struct {
	Ref         string             `json:"$ref"`
	Description string             `json:"description"`
	Content     map[string]oaMedia `json:"content"`
}

type oaParameter struct {
	Name        string    `json:"name"`
	In          string    `json:"in"`
	Required    bool      `json:"required"`
	Description string    `json:"description"`
	Schema      *oaSchema `json:"schema"`
}

type oaOperation struct {
	OperationID string        `json:"operationId"`
	Summary     string        `json:"summary"`
	Description string        `json:"description"`
	Tags        []string      `json:"tags"`
	Parameters  []oaParameter `json:"parameters"`
	RequestBody *struct {
		Description string             `json:"description"`
		Required    bool               `json:"required"`
		Content     map[string]oaMedia `json:"content"`
	} `json:"requestBody"`
	Responses map[string]oaResponse `json:"responses"`
	Security  []map[string][]string `json:"security"`
}

type oaDocument struct {
	Info struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Summary     string `json:"summary"`
		Description string `json:"description"`
	} `json:"info"`
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas         map[string]*oaSchema  `json:"schemas"`
		Responses       map[string]oaResponse `json:"responses"`
		SecuritySchemes map[string]struct {
			Description string `json:"description"`
		} `json:"securitySchemes"`
	} `json:"components"`
}

// Page model.
type (
	docsPage struct {
		Title, Version, Summary, Description string
		Tags                                 []docsTag
		Schemas                              []docsSchema
	}
	docsTag struct {
		Name, Description string
		Operations        []docsOperation
	}
	docsOperation struct {
		Anchor, Method, Path, Summary, Description string
		Auth                                       string
		Parameters                                 []docsField
		Body                                       []docsContent
		BodyDescription                            string
		Responses                                  []docsResponse
	}
	docsContent struct {
		MediaType string
		Type      template.HTML
	}
	docsResponse struct {
		Status, Description string
		Content             []docsContent
	}
	docsField struct {
		Name, In, Description string
		Required              bool
		Type                  template.HTML
	}
	docsSchema struct {
		Name, Description string
		Type              template.HTML
		Fields            []docsField
	}
)

// apiDocsHTML renders the page once (the document is embedded and
// fixed).
var apiDocsHTML = sync.OnceValues(func() ([]byte, error) { return renderAPIDocs(openAPIDocument) })

// renderAPIDocs renders the page of an OpenAPI document.
func renderAPIDocs(doc []byte) ([]byte, error) {
	var d oaDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	p := docsPage{Title: d.Info.Title, Version: d.Info.Version, Summary: d.Info.Summary, Description: d.Info.Description}
	byTag := map[string]*docsTag{}
	for _, t := range d.Tags {
		p.Tags = append(p.Tags, docsTag{Name: t.Name, Description: t.Description})
	}
	for i := range p.Tags {
		byTag[p.Tags[i].Name] = &p.Tags[i]
	}
	methodOrder := []string{"get", "head", "post", "put", "patch", "delete", "options"}
	for _, path := range slices.Sorted(maps.Keys(d.Paths)) {
		for _, m := range methodOrder {
			raw, ok := d.Paths[path][m]
			if !ok {
				continue
			}
			var op oaOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("openapi.json: %s %s: %w", m, path, err)
			}
			o := docsOperation{Anchor: "op-" + op.OperationID, Method: strings.ToUpper(m), Path: path,
				Summary: op.Summary, Description: op.Description, Auth: authText(op.Security)}
			for _, prm := range op.Parameters {
				o.Parameters = append(o.Parameters, docsField{Name: prm.Name, In: prm.In, Required: prm.Required,
					Description: prm.Description, Type: typeHTML(prm.Schema)})
			}
			if rb := op.RequestBody; rb != nil {
				o.BodyDescription = rb.Description
				o.Body = contents(rb.Content)
			}
			for _, c := range slices.Sorted(maps.Keys(op.Responses)) {
				r := op.Responses[c]
				if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
					r = d.Components.Responses[name]
				}
				o.Responses = append(o.Responses, docsResponse{Status: c, Description: r.Description, Content: contents(r.Content)})
			}
			tag := "other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			t, ok := byTag[tag]
			if !ok {
				p.Tags = append(p.Tags, docsTag{Name: tag})
				for i := range p.Tags {
					byTag[p.Tags[i].Name] = &p.Tags[i]
				}
				t = byTag[tag]
			}
			t.Operations = append(t.Operations, o)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(d.Components.Schemas)) {
		s := d.Components.Schemas[n]
		ds := docsSchema{Name: n, Description: s.Description, Type: typeHTML(s)}
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			f := s.Properties[k]
			ds.Fields = append(ds.Fields, docsField{Name: k, Required: slices.Contains(s.Required, k),
				Description: f.Description, Type: typeHTML(f)})
		}
		p.Schemas = append(p.Schemas, ds)
	}
	var buf bytes.Buffer
	if err := apiDocsTpl.Execute(&buf, struct {
		docsPage
		CSS template.CSS
	}{p, template.CSS(apiDocsCSS)}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// authText says how an operation is authorised.
func authText(sec []map[string][]string) string {
	if sec == nil {
		return "Bearer ID token"
	}
	var names []string
	for _, req := range sec {
		for k := range req {
			names = append(names, k)
		}
	}
	switch {
	case len(names) == 0:
		return "none"
	case slices.Contains(names, "cdsClientJWT"):
		return "CDS client JWT"
	default:
		return "Bearer ID token"
	}
}

func contents(c map[string]oaMedia) []docsContent {
	out := make([]docsContent, 0, len(c))
	for _, t := range slices.Sorted(maps.Keys(c)) {
		out = append(out, docsContent{MediaType: t, Type: typeHTML(c[t].Schema)})
	}
	return out
}

// typeHTML is a schema's type in a few words, schema names linked to their
// section. Every text is escaped.
func typeHTML(s *oaSchema) template.HTML {
	if s == nil {
		return ""
	}
	esc := template.HTMLEscapeString
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		return template.HTML(`<a href="#schema-` + esc(name) + `">` + esc(name) + `</a>`)
	}
	join := func(word string, ss []*oaSchema) template.HTML {
		parts := make([]string, len(ss))
		for i, x := range ss {
			parts[i] = string(typeHTML(x))
		}
		return template.HTML(word + " " + strings.Join(parts, ", "))
	}
	switch {
	case len(s.OneOf) > 0:
		return join("one of", s.OneOf)
	case len(s.AnyOf) > 0:
		return join("any of", s.AnyOf)
	case len(s.AllOf) > 0:
		return join("all of", s.AllOf)
	}
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, fmt.Sprint(x))
		}
	}
	out := esc(strings.Join(types, " or "))
	if slices.Contains(types, "array") && s.Items != nil {
		out += " of " + string(typeHTML(s.Items))
	}
	if sub, ok := s.Additional.(map[string]any); ok && len(sub) > 0 {
		b, _ := json.Marshal(sub)
		var as oaSchema
		if json.Unmarshal(b, &as) == nil {
			out += " of " + string(typeHTML(&as)) + " by key"
		}
	}
	if s.Format != "" {
		out += " (" + esc(s.Format) + ")"
	}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = "<code>" + esc(fmt.Sprint(v)) + "</code>"
		}
		out += ": one of " + strings.Join(vals, ", ")
	}
	if s.Const != nil {
		out += ": always <code>" + esc(fmt.Sprint(s.Const)) + "</code>"
	}
	if s.Minimum != nil {
		out += ", at least " + esc(strconv.FormatFloat(*s.Minimum, 'g', -1, 64))
	}
	if s.Maximum != nil {
		out += ", at most " + esc(strconv.FormatFloat(*s.Maximum, 'g', -1, 64))
	}
	if out == "" {
		out = "any"
	}
	return template.HTML(out)
}

// apiDocs serves GET /docs. It needs no token.
func apiDocs(w http.ResponseWriter, _ *http.Request) error {
	page, err := apiDocsHTML()
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", apiDocsCSP)
	h.Set("Content-Length", strconv.Itoa(len(page)))
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(page)
	return nil
}
