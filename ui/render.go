package ui

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// pageNames are the templates under templates/ rendered inside layout.html.
var pageNames = []string{"overview", "operations", "operation", "blocked", "candidates", "candidate", "skills", "login", "error",
	"notfound"}

type pages struct{ byName map[string]*template.Template }

var funcs = template.FuncMap{
	"utc":       formatTime,
	"age":       formatAge,
	"short":     shortID,
	"skillsURL": skillsURL,
	"statusClass": func(s string) string {
		if _, ok := statusOrder[s]; ok {
			return "st-" + s
		}
		return "st-unknown"
	},
	"pubClass": func(s string) string {
		if validPublicationState(s) {
			return "pub-" + s
		}
		return "st-unknown"
	},
	"candidateClass": func(s string) string {
		if validCandidateStatus(s) {
			return "cand-" + s
		}
		return "st-unknown"
	},
}

func mustParsePages() *pages {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range pageNames {
		t := template.Must(layout.Clone())
		p.byName[name] = template.Must(t.ParseFS(templateFS, "templates/"+name+".html"))
	}
	return p
}

// frame is what the layout needs besides the page's own data.
type frame struct {
	Title       string
	Nav         string // overview | operations | blocked | experience | skills
	AutoRefresh int    // seconds; 0 = off
	SignOut     bool   // the request carries a session cookie: show the sign-out button
	Page        any
}

// titled is implemented by page views to fill the frame.
type titled interface {
	frame() frame
}

func (u *ui) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	f := frame{Title: "PowerContext", Page: data}
	if t, ok := data.(titled); ok {
		f = t.frame()
		f.Page = data
	}
	if name == "notfound" {
		f.Title = "Not found"
	}
	if name != "login" {
		_, f.SignOut = u.sessions.sessionCookie(r)
	}
	var buf bytes.Buffer
	if err := u.pages.byName[name].ExecuteTemplate(&buf, "layout.html", f); err != nil {
		u.log.Error().Str("template", name).Msg("dashboard template failed")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// formatTime renders a UTC time with milliseconds; the zero time (SQL NULL) renders as "—".
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

// formatAge renders a duration compactly: 850ms, 12.3s, 4m03s, 5h12m, 3d04h.
func formatAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		return pad(int(d/time.Minute), "m", int(d%time.Minute/time.Second), "s")
	case d < 24*time.Hour:
		d = d.Round(time.Minute)
		return pad(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	default:
		d = d.Round(time.Hour)
		return pad(int(d/(24*time.Hour)), "d", int(d%(24*time.Hour)/time.Hour), "h")
	}
}

func pad(a int, ua string, b int, ub string) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(a))
	sb.WriteString(ua)
	if b < 10 {
		sb.WriteByte('0')
	}
	sb.WriteString(strconv.Itoa(b))
	sb.WriteString(ub)
	return sb.String()
}

// shortID is the first 8 characters of an id (the full id is always in the link and the title attribute).
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

type loginView struct{ Message string }

func (loginView) frame() frame { return frame{Title: "Sign in"} }

type errorView struct{ Title, Message string }

func (v errorView) frame() frame { return frame{Title: v.Title} }
