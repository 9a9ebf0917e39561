package drift

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes differences as a table for a person, one a line, the
// sides named left and right; "—" is what a side did not show.
func WriteTable(w io.Writer, diffs []Difference, left, right string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "OPERATION\tSTATUS\tWHAT\tLOCATION\t%s\t%s\n", strings.ToUpper(left), strings.ToUpper(right))
	for _, d := range diffs {
		status := ""
		if d.Status != 0 {
			status = fmt.Sprint(d.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Operation, status, d.What, orDash(d.Location), orDash(d.Left), orDash(d.Right))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
