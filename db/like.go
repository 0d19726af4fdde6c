package db

import "strings"

// likeEscaper escapes the LIKE wildcards and the escape character itself (every engine's query names '\' as the
// escape character).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// LikeContains is the LIKE pattern that matches query as a literal substring.
func LikeContains(query string) string { return "%" + likeEscaper.Replace(query) + "%" }
