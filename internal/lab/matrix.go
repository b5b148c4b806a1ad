package lab

import (
	"context"
	"sync"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
)

// Test runs scenarios, parallel at a time (each in its own namespaces, with
// its own prefix), checks each against its expect block and returns a test
// report in the order given. done, when set, is called as each run ends.
func Test(ctx context.Context, topos []*scenario.Scenario, parallel int, o Options, done func(*report.LabRun)) *report.LabReport {
	if parallel < 1 {
		parallel = 1
	}
	rep := report.NewLabReport(report.LabModeTest)
	rep.Runs = make([]*report.LabRun, len(topos))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i, t := range topos {
		wg.Add(1)
		go func(i int, t *scenario.Scenario) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var r *report.LabRun
			if ctx.Err() != nil {
				r = &report.LabRun{Scenario: t.Name, Source: t.Source(), Summary: t.Summary, Expect: t.Expect,
					Result: report.LabError, Error: "not run: " + ctx.Err().Error()}
			} else {
				r = Run(ctx, t, o)
			}
			mu.Lock()
			rep.Runs[i] = r
			if done != nil {
				done(r)
			}
			mu.Unlock()
		}(i, t)
	}
	wg.Wait()
	rep.Finish(parallel)
	return rep
}
