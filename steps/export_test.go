package steps

import (
	"context"
	"time"
)

// LetTimePassWith makes the suite of c let time pass by calling wait
// instead of sleeping, as Config.wait says.
func LetTimePassWith(c *Config, wait func(ctx context.Context, d time.Duration) error) { c.wait = wait }
