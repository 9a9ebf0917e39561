package mockserver

// The Go API's schedule controls, as the control API's
// /__mock/schedules/{scheduleId}/runs and /fire.

// ScheduleRuns lists the runs a schedule started, oldest first, whatever
// their team; a deleted schedule's runs are still listed.
func (c *Session) ScheduleRuns(scheduleID string) ([]RunItem, error) {
	views, err := c.ms.ScheduleRuns(scheduleID)
	if err != nil {
		return nil, err
	}
	out := make([]RunItem, 0, len(views))
	for _, v := range views {
		out = append(out, runItem(v, c.linkBase))
	}
	return out, nil
}

// FireSchedule makes a schedule start a run now, paused or not, without
// moving its next tick; it returns the run.
func (c *Session) FireSchedule(scheduleID string) (RunItem, error) {
	v, err := c.ms.FireSchedule(scheduleID)
	if err != nil {
		return RunItem{}, err
	}
	return runItem(v, c.linkBase), nil
}
