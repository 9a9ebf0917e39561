package tagexpr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSelects(t *testing.T) {
	for _, tc := range []struct {
		expr string
		tags []string
		want bool
	}{
		{"", nil, true},
		{"@slow", []string{"@slow"}, true},
		{"@slow", []string{"@fast"}, false},
		{"not @slow", []string{"@slow"}, false},
		{"not @slow", nil, true},
		{"@slow and @creates-runs", []string{"@slow", "@creates-runs"}, true},
		{"@slow and @creates-runs", []string{"@slow"}, false},
		{"@slow or @creates-runs", []string{"@creates-runs"}, true},
		{"@a or @b and @c", []string{"@a"}, true}, // and binds tighter than or
		{"(@a or @b) and @c", []string{"@a"}, false},
		{"(@a or @b) and @c", []string{"@b", "@c"}, true},
		{"not (@a or @b)", []string{"@b"}, false},
		{"not not @a", []string{"@a"}, true},
		{"@mock-control and not @creates-runs", []string{"@mock-control"}, true},
		// godog's older forms.
		{"~@slow", []string{"@slow"}, false},
		{"~@slow", []string{"@fast"}, true},
		{"@a && ~@b", []string{"@a"}, true},
		{"@a && ~@b", []string{"@a", "@b"}, false},
		{"@a,@b", []string{"@b"}, true},
		{"@a,@b && @c", []string{"@a"}, false}, // "," binds tighter than &&
		{"@a,@b && @c", []string{"@b", "@c"}, true},
		{"@creates-runs && ~@mock-control", []string{"@creates-runs"}, true},
		// Mixed: && splits at the top, so appending "&& ~@x" to any
		// expression excludes @x.
		{"(not @slow) && ~@creates-runs", []string{"@slow"}, false},
		{"@a or @b && ~@x", []string{"@a", "@x"}, false},
		{"@a or @b && ~@x", []string{"@b"}, true},
		{"@a or @b and @c && ~@x", []string{"@a"}, true},
	} {
		x, err := Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		assert.Equal(t, tc.want, x.Match(tc.tags), "%q on %v", tc.expr, tc.tags)
	}
}

func TestParseRefusesWithAReason(t *testing.T) {
	for expr, want := range map[string]string{
		"slow":             `"slow" is not a tag`,
		"@a and":           "ends where a tag was expected",
		"(@a or @b":        "never closed",
		"@a @b":            `unexpected "@b"`,
		"@a & @b":          "lone '&'",
		"@a || @b":         "write 'or'",
		"!@a":              "write 'not'",
		"@a and or @b":     `unexpected "or"`,
		"@a)":              `unexpected ")"`,
		"not":              "ends where a tag was expected",
		"@":                `"@" is not a tag`,
		"@a and (not @b))": `unexpected ")"`,
	} {
		_, err := Parse(expr)
		require.Error(t, err, expr)
		assert.Contains(t, err.Error(), want, expr)
		assert.Contains(t, err.Error(), expr)
	}
}

// The godog rendering selects exactly what the expression selects, for every
// combination of the tags it names.
func TestGodogRenderingSelectsTheSame(t *testing.T) {
	tags := []string{"@a", "@b", "@c", "@d"}
	for _, expr := range []string{
		"@a", "not @a", "@a and @b", "@a or @b", "not (@a and @b)", "not (@a or not @b)",
		"(@a or @b) and (@c or not @d)", "@a and @b or @c and @d", "not ((@a or @b) and (@c or @d))",
		"@a,@b && ~@c", "~@a && ~@b", "(not @a) && ~@b or @c",
	} {
		x, err := Parse(expr)
		require.NoError(t, err, expr)
		g, err := Godog(x)
		require.NoError(t, err, expr)
		y, err := Parse(g)
		require.NoError(t, err, "rendering %q of %q", g, expr)
		for mask := 0; mask < 1<<len(tags); mask++ {
			var have []string
			for i, tag := range tags {
				if mask&(1<<i) != 0 {
					have = append(have, tag)
				}
			}
			assert.Equal(t, x.Match(have), y.Match(have), "%q rendered %q, tags %v", expr, g, have)
		}
	}
}

func TestGodogRenderingShapes(t *testing.T) {
	for expr, want := range map[string]string{
		"":                                "",
		"not @slow":                       "~@slow",
		"@slow and @creates-runs":         "@slow && @creates-runs",
		"@a or @b and @c":                 "@a,@b && @a,@c",
		"not (@a and @b)":                 "~@a,~@b",
		"@creates-runs && ~@mock-control": "@creates-runs && ~@mock-control",
	} {
		x, err := Parse(expr)
		require.NoError(t, err)
		got, err := Godog(x)
		require.NoError(t, err)
		assert.Equal(t, want, got, expr)
	}
	x, err := Parse("(@a and @b) or (@c and @d) or (@e and @f) or (@g and @h) or (@i and @j) or (@k and @l) or (@m and @n) or (@o and @p) or (@q and @r)")
	require.NoError(t, err)
	_, err = Godog(x)
	assert.ErrorIs(t, err, ErrTooComplex)
}

func TestAndLeavesOutTheEmptyExpression(t *testing.T) {
	empty, err := Parse("  ")
	require.NoError(t, err)
	x := And(empty, Not(Tag("@creates-runs")))
	assert.Equal(t, "not @creates-runs", x.String())
	assert.False(t, x.Match([]string{"@creates-runs"}))
}
