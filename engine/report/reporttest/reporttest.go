// Package reporttest holds the checks the tests of every surface that
// writes the lab report (engine/report) apply to a rendered document.
package reporttest

import (
	"html"
	"regexp"
	"strings"
	"testing"
)

var (
	// tagRE reads every tag: html/template quotes every attribute value
	// with ", so a value never holds one.
	tagRE   = regexp.MustCompile(`<([a-z][a-z0-9]*)((?:\s+[a-z-]+(?:="[^"]*")?)*)\s*>`)
	attrRE  = regexp.MustCompile(`\s([a-z-]+)(?:="[^"]*")?`)
	styleRE = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	allowed = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
		"section": true, "header": true, "h1": true, "h2": true, "h3": true, "h4": true, "table": true, "caption": true,
		"thead": true, "tbody": true, "tr": true, "th": true, "td": true, "p": true, "ul": true, "ol": true, "li": true,
		"strong": true, "em": true, "span": true, "code": true, "br": true, "article": true, "div": true}
)

// CheckSelfContained fails t when doc could run or fetch anything: an
// element other than the report's own (no script, link, img, iframe,
// form, base …), an attribute that fetches or runs (src, href, action,
// srcset, http-equiv, on…), a '<' that is not one of the tags read (all
// other text is escaped), or a style sheet with url() or @import.
func CheckSelfContained(t testing.TB, doc string) {
	t.Helper()
	lower := strings.ToLower(doc)
	tags := tagRE.FindAllStringSubmatch(lower, -1)
	if len(tags) < 20 {
		t.Fatalf("only %d tags found: the scanner does not read the document", len(tags))
	}
	for _, tag := range tags {
		if !allowed[tag[1]] {
			t.Errorf("the report holds a <%s> element", tag[1])
		}
		for _, a := range attrRE.FindAllStringSubmatch(tag[2], -1) {
			if n := a[1]; n == "src" || n == "href" || n == "action" || n == "srcset" || n == "http-equiv" || strings.HasPrefix(n, "on") {
				t.Errorf("the report holds a tag that fetches or runs: %s", tag[0])
			}
		}
	}
	if n := strings.Count(lower, "<"); n != len(tags)+strings.Count(lower, "</")+strings.Count(lower, "<!doctype") {
		t.Errorf("%d '<' but %d tags read: something the scanner cannot read is in the document", n, len(tags))
	}
	for _, style := range styleRE.FindAllStringSubmatch(lower, -1) {
		if strings.Contains(style[1], "url(") || strings.Contains(style[1], "@import") {
			t.Error("the style sheet fetches a resource")
		}
	}
}

// Styles returns the contents of the document's style elements.
func Styles(doc string) []string {
	var out []string
	for _, m := range styleRE.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// ReviewEntry returns the text (unescaped) of the review entry of gene in
// the section of sample, and whether there is one.
func ReviewEntry(doc, sample, gene string) (string, bool) {
	sec, ok := Section(doc, sample)
	if !ok {
		return "", false
	}
	m := regexp.MustCompile(`(?s)<div class="gene review" data-gene="` + regexp.QuoteMeta(html.EscapeString(gene)) + `">(.*?)</div>`).FindStringSubmatch(sec)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(m[1]), true
}

// GeneRow returns the state shown in the genes table of sample for gene
// and the row's cells (unescaped).
func GeneRow(doc, sample, gene string) (state, cells string, ok bool) {
	sec, ok := Section(doc, sample)
	if !ok {
		return "", "", false
	}
	m := regexp.MustCompile(`(?s)<tr class="[a-z]+" data-gene="` + regexp.QuoteMeta(html.EscapeString(gene)) + `" data-state="([^"]*)">(.*?)</tr>`).FindStringSubmatch(sec)
	if m == nil {
		return "", "", false
	}
	return html.UnescapeString(m[1]), html.UnescapeString(m[2]), true
}

// Section returns the HTML of sample's section.
func Section(doc, sample string) (string, bool) {
	open := regexp.MustCompile(`<section class="sample(?: newpage)?" data-sample="` + regexp.QuoteMeta(escapeAttr(sample)) + `"`)
	loc := open.FindStringIndex(doc)
	if loc == nil {
		return "", false
	}
	rest := doc[loc[0]:]
	end := strings.Index(rest[1:], `<section class="sample`)
	if e := strings.Index(rest, `<section class="run`); e >= 0 && (end < 0 || e < end+1) {
		return rest[:e], true
	}
	if end < 0 {
		return rest, true
	}
	return rest[:end+1], true
}

// escapeAttr escapes s as html/template does in an attribute value for
// the names tests use (letters, digits, '-', '_', '.').
func escapeAttr(s string) string { return html.EscapeString(s) }
