package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// defaultEras are the protocol revisions whose client scenarios run: the
// last with the initialize handshake and the stateless one after it.
const defaultEras = "2025-11-25,2026-07-28"

// scenarioTimeout bounds one scenario (the suite's own client timeout is
// 30 s).
const scenarioTimeout = 90 * time.Second

// suite is where the conformance package and its Node.js are installed.
type suite struct {
	node, cli string
	self      string // this binary: the client the suite runs
	out       string // where the suite writes each scenario's results
	verbose   bool
}

// outcome is one scenario's run.
type outcome struct {
	era, scenario string
	passed        bool
	checks        string   // "3/3"
	reasons       []string // the failed checks, or why the run failed
}

func runSuite(args []string) error {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	dir := fs.String("conformance", "tools/conformance", "the folder where `npm ci` installed the suite and Node.js")
	eras := fs.String("era", defaultEras, "comma-separated protocol revisions whose client scenarios run")
	run := fs.String("run", "", "run only the scenarios matching this regular expression")
	out := fs.String("out", "", "keep each scenario's results (checks.json, the client's output) in this folder")
	verbose := fs.Bool("v", false, "print the suite's whole output of a failed scenario")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var filter *regexp.Regexp
	if *run != "" {
		var err error
		if filter, err = regexp.Compile(*run); err != nil {
			return fmt.Errorf("-run: %w", err)
		}
	}
	s, cleanup, err := newSuite(*dir, *out, *verbose)
	if err != nil {
		return err
	}
	defer cleanup()

	var results []outcome
	for _, era := range strings.Split(*eras, ",") {
		era = strings.TrimSpace(era)
		scenarios, err := s.list(era)
		if err != nil {
			return err
		}
		for _, sc := range scenarios {
			if filter != nil && !filter.MatchString(sc) {
				continue
			}
			o := s.runScenario(era, sc)
			results = append(results, o)
			printOutcome(o)
		}
	}
	passed := 0
	for _, o := range results {
		if o.passed {
			passed++
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, len(results)-passed)
	if passed != len(results) {
		return errors.New("some scenarios failed")
	}
	return nil
}

func newSuite(dir, out string, verbose bool) (*suite, func(), error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	s := &suite{
		node:    filepath.Join(abs, "node_modules", ".bin", "node"),
		cli:     filepath.Join(abs, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		verbose: verbose,
	}
	for _, f := range []string{s.node, s.cli} {
		if _, err := os.Stat(f); err != nil {
			return nil, nil, fmt.Errorf("%s is missing: run `npm ci` in %s (make conformance does)", f, dir)
		}
	}
	if s.self, err = os.Executable(); err != nil {
		return nil, nil, err
	}
	cleanup := func() {}
	if out == "" {
		if out, err = os.MkdirTemp("", "conformance-results-*"); err != nil {
			return nil, nil, err
		}
		cleanup = func() { _ = os.RemoveAll(out) }
	}
	s.out = out
	return s, cleanup, nil
}

// list is the client scenarios of era (the suite leaves extensions out of
// a version's list).
func (s *suite) list(era string) ([]string, error) {
	cmd := exec.Command(s.node, s.cli, "list", "--client", "--spec-version", era)
	cmd.Env = s.env()
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("list the scenarios of %s: %w", era, err)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "- ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(name, ' '); i >= 0 {
			name = name[:i]
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the suite lists no client scenario for %s", era)
	}
	return names, nil
}

// env is the suite's environment: its Node.js first in PATH.
func (s *suite) env() []string {
	return append(os.Environ(), "PATH="+filepath.Dir(s.node)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

var summaryLine = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)

func (s *suite) runScenario(era, scenario string) outcome {
	o := outcome{era: era, scenario: scenario}
	dir := filepath.Join(s.out, era, strings.ReplaceAll(scenario, "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		o.reasons = []string{err.Error()}
		return o
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, s.cli, "client", "--command", s.self, "--scenario", scenario,
		"--spec-version", era, "-o", dir)
	cmd.Env = s.env()
	output, err := cmd.CombinedOutput()
	if m := summaryLine.FindSubmatch(output); m != nil {
		o.checks = string(m[1]) + "/" + string(m[2])
	}
	o.passed = err == nil
	if o.passed {
		return o
	}
	o.reasons = failedChecks(dir)
	switch {
	case ctx.Err() != nil:
		o.reasons = append(o.reasons, "the scenario did not finish within "+scenarioTimeout.String())
	case bytes.Contains(output, []byte("CLIENT TIMED OUT")):
		o.reasons = append(o.reasons, "the client timed out")
	case bytes.Contains(output, []byte("CLIENT EXITED WITH ERROR")):
		o.reasons = append(o.reasons, "the client exited with an error: "+lastErrorLine(dir))
	case len(o.reasons) == 0:
		o.reasons = append(o.reasons, "the suite failed: "+lastLines(string(output), 5))
	}
	if s.verbose {
		o.reasons = append(o.reasons, "output:\n"+string(output))
	}
	return o
}

// failedChecks reads the failed and warning checks of a scenario's
// checks.json (under dir, in the folder the suite made).
func failedChecks(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []struct {
			ID, Name, Status, ErrorMessage string
		}
		if json.Unmarshal(b, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				msg := fmt.Sprintf("%s %s (%s)", c.Status, c.Name, c.ID)
				if c.ErrorMessage != "" {
					msg += ": " + c.ErrorMessage
				}
				out = append(out, msg)
			}
		}
	}
	return out
}

// lastErrorLine is the client's last stderr line that says what failed.
func lastErrorLine(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "stderr.txt"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.HasPrefix(lines[i], "conformance-client:") {
				return lines[i]
			}
		}
		return lastLines(string(b), 3)
	}
	return "(no stderr)"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func printOutcome(o outcome) {
	verdict := "PASS"
	if !o.passed {
		verdict = "FAIL"
	}
	checks := ""
	if o.checks != "" {
		checks = " (" + o.checks + " checks)"
	}
	fmt.Printf("%s %s %s%s\n", verdict, o.era, o.scenario, checks)
	for _, r := range o.reasons {
		fmt.Printf("     %s\n", r)
	}
}
