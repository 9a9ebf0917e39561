package steps

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Waiting for an instant of the server's clock: a signed link's expiry.
// With the mock's control API the suite moves the scenario's clock there;
// against any other server it waits in real time, when the instant is
// within its patience (--timeout), and otherwise reports the check as not
// made (inconclusive), never as failed.

// clockGrace is how far past an instant the suite waits before judging
// what happened at it: the Date header it reckons the server's clock by
// has whole seconds, and clocks drift.
const clockGrace = time.Second

// letServerClockPass returns once the server's clock has passed at. seen is
// the answer that announced at: its Date header tells how the server's
// clock stands to the suite's. what names the instant for the report.
func (s *scenario) letServerClockPass(ctx context.Context, at time.Time, seen *response, what string) error {
	if s.api.control != nil {
		clock, err := s.api.controlCall(ctx, http.MethodGet, "/clock", nil)
		if err != nil {
			return err
		}
		now, err := time.Parse(time.RFC3339Nano, str(clock["now"]))
		if err != nil {
			return fmt.Errorf("mock control API: the clock's now %q: %w", str(clock["now"]), err)
		}
		if by := at.Sub(now) + time.Millisecond; by > 0 {
			return s.api.advanceClock(ctx, by)
		}
		return nil
	}
	wait := time.Until(at.Add(-serverAhead(seen)).Add(clockGrace))
	if wait > s.suite.cfg.Timeout {
		return s.inconclusive(fmt.Sprintf("%s is %s, %s from now: beyond the suite's patience (--timeout %s), so what happens then was not checked",
			what, at.UTC().Format(time.RFC3339), wait.Round(time.Second), s.suite.cfg.Timeout))
	}
	fmt.Fprintf(s.suite.cfg.Log, "waiting %s for %s (%s)\n", wait.Round(100*time.Millisecond), what, at.UTC().Format(time.RFC3339Nano))
	return s.suite.pause(ctx, wait)
}

// serverAhead is how far the server's clock is ahead of the suite's (negative
// when behind), as the Date header of an answer tells; 0 without one. The
// Date has whole seconds, so the server may be up to a second further on:
// the estimate errs towards waiting longer.
func serverAhead(seen *response) time.Duration {
	if seen == nil || seen.received.IsZero() {
		return 0
	}
	date, err := http.ParseTime(seen.header.Get("Date"))
	if err != nil {
		return 0
	}
	return date.Sub(seen.received)
}

// signedLinkExpiry reads when a signed download URL stops working from the
// parameters storage services sign into it: X-Goog-Date and X-Goog-Expires
// (Google Cloud Storage), X-Amz-Date and X-Amz-Expires (S3 and its kin),
// Expires in Unix seconds (older signed URLs, CloudFront), or se (Azure).
// ok is false when the URL carries none of them: it does not say.
func signedLinkExpiry(link string) (at time.Time, ok bool) {
	u, err := url.Parse(link)
	if err != nil {
		return time.Time{}, false
	}
	q := u.Query()
	for _, p := range []string{"X-Goog", "X-Amz"} {
		signed, err1 := time.Parse("20060102T150405Z", q.Get(p+"-Date"))
		secs, err2 := strconv.ParseInt(q.Get(p+"-Expires"), 10, 64)
		if err1 == nil && err2 == nil {
			return signed.Add(time.Duration(secs) * time.Second), true
		}
	}
	if secs, err := strconv.ParseInt(q.Get("Expires"), 10, 64); err == nil {
		return time.Unix(secs, 0), true
	}
	if se, err := time.Parse(time.RFC3339, q.Get("se")); err == nil {
		return se, true
	}
	return time.Time{}, false
}
