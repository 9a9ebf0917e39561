// Package tagexpr parses the tag expressions that select scenarios, in
// Cucumber's standard syntax (`@smoke and not (@slow or @ui)`) and in godog's
// older one (`@smoke && ~@slow`, with `,` for "or"), and evaluates them
// against a scenario's tags.
//
// Cucumber's own Go implementation is not available as a module here, so this
// is a small recursive-descent parser. Both syntaxes share one grammar, from
// the loosest operator to the tightest:
//
//	&&          (godog's "and", splitting the expression at the top as in godog,
//	            so "X && ~@slow" excludes @slow whatever X is)
//	or          (Cucumber)
//	and         (Cucumber)
//	,           (godog's "or", tighter than &&, so "@a,@b && @c" is (@a or @b) and @c)
//	not, ~      (both)
//	( ... )     (Cucumber)
//
// Godog only understands its older syntax, so an Expr also renders itself in
// conjunctive normal form, which that syntax can express exactly.
package tagexpr

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Expr is a parsed tag expression.
type Expr interface {
	// Match reports whether a scenario with these tags is selected. Tags
	// are compared without their leading "@".
	Match(tags []string) bool
	// String renders the expression in Cucumber's syntax, fully
	// parenthesised.
	String() string
}

// MaxClauses bounds the size of the godog rendering of an expression.
const MaxClauses = 256

type (
	tagNode struct{ name string } // without the "@"
	notNode struct{ x Expr }
	andNode struct{ l, r Expr }
	orNode  struct{ l, r Expr }
	// trueNode is the empty expression: it selects everything.
	trueNode struct{}
)

func (t tagNode) Match(tags []string) bool {
	for _, g := range tags {
		if strings.TrimPrefix(g, "@") == t.name {
			return true
		}
	}
	return false
}
func (n notNode) Match(tags []string) bool { return !n.x.Match(tags) }
func (a andNode) Match(tags []string) bool { return a.l.Match(tags) && a.r.Match(tags) }
func (o orNode) Match(tags []string) bool  { return o.l.Match(tags) || o.r.Match(tags) }
func (trueNode) Match([]string) bool       { return true }
func (t tagNode) String() string           { return "@" + t.name }
func (n notNode) String() string           { return "not " + n.x.String() }
func (a andNode) String() string           { return "(" + a.l.String() + " and " + a.r.String() + ")" }
func (o orNode) String() string            { return "(" + o.l.String() + " or " + o.r.String() + ")" }
func (trueNode) String() string            { return "" }

// And joins two expressions; the empty expression is left out.
func And(a, b Expr) Expr {
	switch {
	case isTrue(a):
		return b
	case isTrue(b):
		return a
	}
	return andNode{a, b}
}

// Not negates x.
func Not(x Expr) Expr { return notNode{x} }

// Tag is the expression selecting the scenarios tagged name ("@slow").
func Tag(name string) Expr { return tagNode{strings.TrimPrefix(name, "@")} }

func isTrue(x Expr) bool { _, ok := x.(trueNode); return ok }

// Parse reads a tag expression; the empty string selects every scenario.
func Parse(s string) (Expr, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return trueNode{}, nil
	}
	p := &parser{toks: toks, src: s}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, p.errorf("unexpected %q", p.toks[p.pos])
	}
	return x, nil
}

// tokenize splits s into "(", ")", ",", "&&", "~" and words.
func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',' || c == '~':
			toks = append(toks, string(c))
			i++
		case c == '&':
			if !strings.HasPrefix(s[i:], "&&") {
				return nil, fmt.Errorf("tag expression %q: a lone '&' at %d (write 'and' or '&&')", s, i)
			}
			toks = append(toks, "&&")
			i += 2
		case c == '|':
			return nil, fmt.Errorf("tag expression %q: '|' at %d (write 'or')", s, i)
		case c == '!':
			return nil, fmt.Errorf("tag expression %q: '!' at %d (write 'not')", s, i)
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n(),~&|!", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

type parser struct {
	toks []string
	pos  int
	src  string
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("tag expression %q: %s", p.src, fmt.Sprintf(format, args...))
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) expr() (Expr, error) {
	x, err := p.or()
	for err == nil && p.peek() == "&&" {
		p.pos++
		var y Expr
		if y, err = p.or(); err == nil {
			x = andNode{x, y}
		}
	}
	return x, err
}

func (p *parser) or() (Expr, error) {
	x, err := p.and()
	for err == nil && p.peek() == "or" {
		p.pos++
		var y Expr
		if y, err = p.and(); err == nil {
			x = orNode{x, y}
		}
	}
	return x, err
}

func (p *parser) and() (Expr, error) {
	x, err := p.comma()
	for err == nil && p.peek() == "and" {
		p.pos++
		var y Expr
		if y, err = p.comma(); err == nil {
			x = andNode{x, y}
		}
	}
	return x, err
}

func (p *parser) comma() (Expr, error) {
	x, err := p.unary()
	for err == nil && p.peek() == "," {
		p.pos++
		var y Expr
		if y, err = p.unary(); err == nil {
			x = orNode{x, y}
		}
	}
	return x, err
}

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	switch t {
	case "":
		return nil, p.errorf("ends where a tag was expected")
	case "not", "~":
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notNode{x}, nil
	case "(":
		p.pos++
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, p.errorf("a '(' is never closed")
		}
		p.pos++
		return x, nil
	case ")", ",", "&&", "and", "or":
		return nil, p.errorf("unexpected %q where a tag was expected", t)
	}
	p.pos++
	if !strings.HasPrefix(t, "@") || len(t) == 1 || !validTag(t[1:]) {
		return nil, p.errorf("%q is not a tag (tags look like @slow)", t)
	}
	return tagNode{t[1:]}, nil
}

func validTag(name string) bool {
	for _, r := range name {
		if unicode.IsSpace(r) || r == '@' {
			return false
		}
	}
	return true
}

// ErrTooComplex means an expression has no godog rendering of a sensible size.
var ErrTooComplex = errors.New("tag expression too complex")

// Godog renders x in godog's older syntax: clauses joined by "&&", each a
// list of tags or "~"-negated tags joined by ",". The rendering selects
// exactly the scenarios x selects.
func Godog(x Expr) (string, error) {
	if isTrue(x) {
		return "", nil
	}
	clauses, err := cnf(x, false)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(clauses))
	for i, c := range clauses {
		parts[i] = strings.Join(c, ",")
	}
	return strings.Join(parts, " && "), nil
}

// cnf returns x (negated when neg) as a conjunction of disjunctions of
// literals such as "@slow" and "~@slow".
func cnf(x Expr, neg bool) ([][]string, error) {
	switch n := x.(type) {
	case tagNode:
		if neg {
			return [][]string{{"~@" + n.name}}, nil
		}
		return [][]string{{"@" + n.name}}, nil
	case notNode:
		return cnf(n.x, !neg)
	case andNode:
		if neg { // not (a and b) = not a or not b
			return cnfOr(n.l, n.r, true)
		}
		return cnfAnd(n.l, n.r, false)
	case orNode:
		if neg { // not (a or b) = not a and not b
			return cnfAnd(n.l, n.r, true)
		}
		return cnfOr(n.l, n.r, false)
	}
	return nil, fmt.Errorf("tagexpr: unexpected node %T", x)
}

func cnfAnd(a, b Expr, neg bool) ([][]string, error) {
	l, err := cnf(a, neg)
	if err != nil {
		return nil, err
	}
	r, err := cnf(b, neg)
	if err != nil {
		return nil, err
	}
	if len(l)+len(r) > MaxClauses {
		return nil, ErrTooComplex
	}
	return append(l, r...), nil
}

// cnfOr distributes: (l1 and l2) or (r1 and r2) = (l1 or r1) and (l1 or r2) ...
func cnfOr(a, b Expr, neg bool) ([][]string, error) {
	l, err := cnf(a, neg)
	if err != nil {
		return nil, err
	}
	r, err := cnf(b, neg)
	if err != nil {
		return nil, err
	}
	if len(l)*len(r) > MaxClauses {
		return nil, ErrTooComplex
	}
	out := make([][]string, 0, len(l)*len(r))
	for _, cl := range l {
		for _, cr := range r {
			out = append(out, append(append([]string(nil), cl...), cr...))
		}
	}
	return out, nil
}

// Tags lists the tags x names, with their "@", in the order written.
func Tags(x Expr) []string {
	switch n := x.(type) {
	case tagNode:
		return []string{"@" + n.name}
	case notNode:
		return Tags(n.x)
	case andNode:
		return append(Tags(n.l), Tags(n.r)...)
	case orNode:
		return append(Tags(n.l), Tags(n.r)...)
	}
	return nil
}
