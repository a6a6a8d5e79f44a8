// natsload: the NATS side of `make bench` (issue 19). It measures what Lyceum's suite measures
// for its own server, the same way, so that the two can stand in one table:
//
//	natsload respond   -url URL -subject S -replies FILE
//	    a responder process: answers {"op":"get_course","course":ID} with the reply Lyceum's
//	    catalog gave for ID (FILE: one "ID<TAB>REPLY" line per course), an error reply otherwise
//	natsload request   -url URL -subject S -replies FILE [load options]
//	    request/reply through nats-server to the responder, courses taken in turn
//	natsload jetstream -url URL -stream NAME -subject S -size BYTES [-replicas R] [load options]
//	    JetStream publish of SIZE-byte messages to a file stream of R replicas (URL may list a
//	    cluster's servers, comma-separated), each waiting for its ack
//	natsload failover | leader …
//	    retrying publishers while servers are killed, and the stream's leader (failover.go)
//
// Load options: -in-flight N (requests outstanding at all times, closed loop), -connections M
// (client connections, the in-flight requests spread over them), -warmup T, -duration T,
// -server-pid PID (repeatable: processes whose CPU time and threads' context switches over the
// measured interval are divided by the measured requests), -requests N (stop after N requests,
// warm-up included, or at the end of -duration, whichever comes first: a fixed count, for
// Benchmarks/syscalls.sh), -label TEXT. The result is printed on stdout as JSON with the
// members `lyceum bench --json` has (requests_per_second, latency_us, curve, server_cpu, …), so
// the suite reads both alike and `lyceum bench plot` draws both; a summary goes to stderr.
//
// Built with Debian's packaged nats.go and no network: GO111MODULE=off GOPATH=/usr/share/gocode.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on every Linux
// architecture Go runs on (the kernel fixes it for user space).
const clockTicks = 100

var errWrongReply = errors.New("wrong_reply")

type pidList []int

func (p *pidList) String() string { return fmt.Sprint(*p) }
func (p *pidList) Set(text string) error {
	pid, err := strconv.Atoi(text)
	if err != nil || pid <= 0 {
		return fmt.Errorf("not a process id: %q", text)
	}
	*p = append(*p, pid)
	return nil
}

type loadOptions struct {
	url         string
	subject     string
	inFlight    int
	connections int
	warmup      time.Duration
	duration    time.Duration
	requests    int64
	label       string
	serverPIDs  pidList
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	mode := os.Args[1]
	flags := flag.NewFlagSet("natsload "+mode, flag.ExitOnError)
	var load loadOptions
	flags.StringVar(&load.url, "url", nats.DefaultURL, "nats-server URL")
	flags.StringVar(&load.subject, "subject", "lyceum.catalog", "subject requests or messages go to")
	replies := flags.String("replies", "", "respond, request: file of ID<TAB>REPLY lines, one per course")
	stream := flags.String("stream", "LYCEUM_BENCH", "jetstream: the file stream created for the run")
	size := flags.Int("size", 200, "jetstream, failover: bytes per message")
	replicas := flags.Int("replicas", 1, "jetstream, failover: replicas of the file stream")
	publishers := flags.Int("publishers", 8, "failover: publishers, one connection and one message in flight each")
	acks := flags.String("acks", "", "failover: file the acknowledgement times go to")
	progress := flags.String("progress", "", "failover: file holding the count of acknowledgements so far")
	settledFlag := flags.Bool("settled", false, "leader: wait until every replica is online and current")
	timeout := flags.Duration("timeout", 60*time.Second, "leader, failover: how long to wait for the stream")
	flags.IntVar(&load.inFlight, "in-flight", 50, "requests outstanding at all times")
	flags.IntVar(&load.connections, "connections", 4, "client connections")
	flags.DurationVar(&load.warmup, "warmup", 2*time.Second, "not measured")
	flags.DurationVar(&load.duration, "duration", 10*time.Second, "measured time after the warm-up")
	flags.Int64Var(&load.requests, "requests", 0, "stop after this many requests, warm-up included (0: at the end of -duration)")
	flags.StringVar(&load.label, "label", "nats "+mode, "the run's name in reports and charts")
	flags.Var(&load.serverPIDs, "server-pid", "a server process whose CPU time is measured (repeatable)")
	_ = flags.Parse(os.Args[2:])
	if load.inFlight < 1 || load.connections < 1 || load.inFlight < load.connections || load.duration <= 0 || load.warmup < 0 {
		fail("need -in-flight ≥ -connections ≥ 1, -duration > 0 and -warmup ≥ 0")
	}

	switch mode {
	case "respond":
		courses := readReplies(*replies)
		respond(load.url, load.subject, courses)
	case "request":
		courses := readReplies(*replies)
		ids := make([]string, 0, len(courses))
		for id := range courses {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		requests := make([][]byte, len(ids))
		for i, id := range ids {
			requests[i], _ = json.Marshal(map[string]string{"op": "get_course", "course": id})
		}
		report(run(load, func(conn *nats.Conn, worker int) (func(n int) error, error) {
			return func(n int) error {
				msg, err := conn.Request(load.subject, requests[(worker+n)%len(requests)], 5*time.Second)
				if err != nil {
					return err
				}
				var reply struct {
					Ok bool `json:"ok"`
				}
				if json.Unmarshal(msg.Data, &reply) != nil || !reply.Ok {
					return errWrongReply
				}
				return nil
			}, nil
		}))
	case "jetstream":
		if *size < 1 || *size > 1<<20 {
			fail("-size must be from 1 to 1048576")
		}
		prepareStream(load.url, *stream, load.subject, *replicas)
		report(run(load, func(conn *nats.Conn, worker int) (func(n int) error, error) {
			js, err := conn.JetStream()
			if err != nil {
				return nil, err
			}
			body := bytes.Repeat([]byte{'x'}, *size)
			return func(n int) error {
				_, err := js.Publish(load.subject, body)
				return err
			}, nil
		}))
	case "failover", "leader":
		options := failoverOptions{url: load.url, stream: *stream, subject: load.subject, replicas: *replicas,
			publishers: *publishers, size: *size, acks: *acks, progress: *progress, settled: *settledFlag, timeout: *timeout}
		if mode == "leader" {
			leader(options)
		} else {
			failover(options)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: natsload respond|request|jetstream|failover|leader [options]; natsload MODE -h lists them")
	os.Exit(2)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "natsload: "+format+"\n", args...)
	os.Exit(2)
}

// readReplies reads "ID<TAB>REPLY" lines: the replies Lyceum's catalog gave, byte for byte.
func readReplies(path string) map[string][]byte {
	if path == "" {
		fail("-replies FILE is required")
	}
	file, err := os.Open(path)
	if err != nil {
		fail("cannot read the replies: %v", err)
	}
	defer file.Close()
	courses := map[string][]byte{}
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		id, reply, found := strings.Cut(scanner.Text(), "\t")
		if !found || id == "" {
			fail("%s: a line is not ID<TAB>REPLY", path)
		}
		courses[id] = []byte(reply)
	}
	if err := scanner.Err(); err != nil || len(courses) == 0 {
		fail("%s: no replies (%v)", path, err)
	}
	return courses
}

// respond answers get_course requests until SIGTERM or SIGINT. Like Lyceum's catalog it parses
// each request and looks the course up; it does not render the course again.
func respond(url, subject string, courses map[string][]byte) {
	conn, err := nats.Connect(url, nats.Name("natsload responder"))
	if err != nil {
		fail("cannot connect to %s: %v", url, err)
	}
	notFound := []byte(`{"ok":false,"error":{"code":"not_found","message":"no such course"}}`)
	invalid := []byte(`{"ok":false,"error":{"code":"invalid_request","message":"expected {\"op\":\"get_course\",\"course\":ID}"}}`)
	_, err = conn.Subscribe(subject, func(msg *nats.Msg) {
		var request struct {
			Op     string `json:"op"`
			Course string `json:"course"`
		}
		reply := invalid
		if json.Unmarshal(msg.Data, &request) == nil && request.Op == "get_course" {
			reply = notFound
			if course, found := courses[request.Course]; found {
				reply = course
			}
		}
		_ = msg.Respond(reply)
	})
	if err == nil {
		err = conn.Flush()
	}
	if err != nil {
		fail("cannot subscribe to %s: %v", subject, err)
	}
	fmt.Fprintln(os.Stderr, "natsload: responding on", subject)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	conn.Close()
}

// prepareStream creates the file stream the run publishes to, empty, with `replicas` replicas.
func prepareStream(url, name, subject string, replicas int) {
	conn, err := nats.Connect(url)
	if err != nil {
		fail("cannot connect to %s: %v", url, err)
	}
	defer conn.Close()
	js, err := conn.JetStream()
	if err == nil {
		_ = js.DeleteStream(name)
		_, err = js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{subject}, Storage: nats.FileStorage, Replicas: replicas})
	}
	if err != nil {
		fail("cannot create the file stream %s: %v", name, err)
	}
}

// outcome is what one worker goroutine measured.
type outcome struct {
	latencies []time.Duration
	errors    map[string]int
	last      time.Time
}

type result struct {
	options   loadOptions
	seconds   float64
	latencies []time.Duration
	errors    map[string]int
	cpu       map[int]processUsage
	cpuError  error
}

// run keeps options.inFlight requests outstanding, spread over options.connections
// connections, for the warm-up and then the measured duration. prepare gives each worker
// goroutine its request function (n counts that worker's requests).
func run(options loadOptions, prepare func(conn *nats.Conn, worker int) (func(n int) error, error)) result {
	conns := make([]*nats.Conn, options.connections)
	for i := range conns {
		conn, err := nats.Connect(options.url, nats.Name(fmt.Sprintf("natsload %d", i)))
		if err != nil {
			fail("cannot connect to %s: %v", options.url, err)
		}
		defer conn.Close()
		conns[i] = conn
	}
	senders := make([]func(int) error, options.inFlight)
	for w := range senders {
		send, err := prepare(conns[w%len(conns)], w)
		if err != nil {
			fail("cannot prepare: %v", err)
		}
		senders[w] = send
	}
	start := time.Now().Add(20 * time.Millisecond)
	measuredFrom := start.Add(options.warmup)
	until := measuredFrom.Add(options.duration)
	outcomes := make([]outcome, options.inFlight)
	var issued atomic.Int64
	var group sync.WaitGroup
	for w := range senders {
		group.Add(1)
		go func(w int) {
			defer group.Done()
			mine := outcome{errors: map[string]int{}}
			time.Sleep(time.Until(start))
			for n := 0; ; n++ {
				sent := time.Now()
				if !sent.Before(until) || (options.requests > 0 && issued.Add(1) > options.requests) {
					break
				}
				err := senders[w](n)
				done := time.Now()
				if sent.Before(measuredFrom) {
					continue
				}
				mine.latencies = append(mine.latencies, done.Sub(sent))
				mine.last = done
				if err != nil {
					mine.errors[errorCode(err)]++
				}
			}
			outcomes[w] = mine
		}(w)
	}
	time.Sleep(time.Until(measuredFrom))
	before, beforeErr := usages(options.serverPIDs)
	group.Wait()
	after, afterErr := usages(options.serverPIDs)

	merged := result{options: options, errors: map[string]int{}, cpu: map[int]processUsage{}}
	last := measuredFrom
	for _, o := range outcomes {
		merged.latencies = append(merged.latencies, o.latencies...)
		for code, count := range o.errors {
			merged.errors[code] += count
		}
		if o.last.After(last) {
			last = o.last
		}
	}
	merged.seconds = last.Sub(measuredFrom).Seconds()
	if merged.cpuError = beforeErr; merged.cpuError == nil {
		merged.cpuError = afterErr
	}
	if merged.cpuError == nil {
		for pid, end := range after {
			merged.cpu[pid] = end.minus(before[pid])
		}
	}
	return merged
}

func errorCode(err error) string {
	switch {
	case errors.Is(err, nats.ErrTimeout):
		return "timed_out"
	case errors.Is(err, nats.ErrNoResponders):
		return "no_responders"
	case errors.Is(err, errWrongReply):
		return "wrong_reply"
	default:
		return "transport"
	}
}

// processUsage is what a server process has used so far: CPU time (utime + stime, /proc/PID/stat) and
// the context switches of its threads, summed over /proc/PID/task/*/status (as lyceum bench counts
// them: /proc/PID/status has the main thread's only).
type processUsage struct {
	cpu                    time.Duration
	voluntary, involuntary int64
}

func (u processUsage) minus(earlier processUsage) processUsage {
	return processUsage{u.cpu - earlier.cpu, u.voluntary - earlier.voluntary, u.involuntary - earlier.involuntary}
}

// usages reads the usage of each process.
func usages(pids []int) (map[int]processUsage, error) {
	times := map[int]processUsage{}
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, err
		}
		// The command name, in parentheses, may hold spaces: fields count from its end.
		text := string(data)
		fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
		if len(fields) < 13 {
			return nil, fmt.Errorf("/proc/%d/stat: too few fields", pid)
		}
		utime, err1 := strconv.ParseInt(fields[11], 10, 64)
		stime, err2 := strconv.ParseInt(fields[12], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/%d/stat: utime and stime are not numbers", pid)
		}
		used := processUsage{cpu: time.Duration(utime+stime) * time.Second / clockTicks}
		// A thread that ends between the listing and its reading is left out.
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, task := range tasks {
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(status), "\n") {
				name, value, found := strings.Cut(line, ":")
				count, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
				if !found || err != nil {
					continue
				}
				switch name {
				case "voluntary_ctxt_switches":
					used.voluntary += count
				case "nonvoluntary_ctxt_switches":
					used.involuntary += count
				}
			}
		}
		times[pid] = used
	}
	return times, nil
}

func micros(d time.Duration) int64 { return d.Microseconds() }

// report prints the JSON result on stdout and a summary on stderr; exits 1 if any request failed.
func report(r result) {
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	count := len(r.latencies)
	at := func(percentile float64) int64 {
		if count == 0 {
			return 0
		}
		index := int(math.Ceil(percentile/100*float64(count))) - 1
		if index < 0 {
			index = 0
		}
		return micros(r.latencies[index])
	}
	var total time.Duration
	for _, latency := range r.latencies {
		total += latency
	}
	errorCount := 0
	for _, n := range r.errors {
		errorCount += n
	}
	rate := 0.0
	if r.seconds > 0 {
		rate = float64(count) / r.seconds
	}
	latency := map[string]any{"p50": at(50), "p90": at(90), "p99": at(99), "p99.9": at(99.9), "max": at(100), "mean": 0.0}
	if count > 0 {
		latency["mean"] = float64(micros(total)) / float64(count)
	}
	// The same percentiles as Lyceum's curve: evenly spaced on a 1/(1 − p) scale, then the maximum.
	points := [][2]any{}
	for step := 0; count > 0 && step <= 60; step++ {
		percentile := 100 * (1 - math.Pow(10, -float64(step)/10))
		if percentile/100 > 1-1/float64(count) {
			break
		}
		points = append(points, [2]any{percentile, at(percentile)})
	}
	if count > 0 {
		points = append(points, [2]any{100.0, at(100)})
	}
	out := map[string]any{
		"label": r.options.label, "endpoint": r.options.url, "scenario": r.options.subject,
		"load":        map[string]any{"mode": "closed", "in_flight": r.options.inFlight},
		"connections": r.options.connections, "seconds": r.seconds, "requests": count,
		"requests_per_second": rate, "errors": r.errors, "error_count": errorCount,
		"latency_us": latency, "curve": map[string]any{"label": r.options.label, "points": points},
	}
	summary := fmt.Sprintf("%s: %d requests in %.2f s = %.0f req/s, p50 %.3f ms, p99 %.3f ms, errors %d",
		r.options.label, count, r.seconds, rate, float64(at(50))/1000, float64(at(99))/1000, errorCount)
	if len(r.options.serverPIDs) > 0 {
		if r.cpuError != nil {
			fmt.Fprintln(os.Stderr, "natsload: server CPU not measured:", r.cpuError)
		} else {
			processes := map[string]float64{}
			var sum processUsage
			for pid, used := range r.cpu {
				processes[strconv.Itoa(pid)] = float64(micros(used.cpu))
				sum = processUsage{sum.cpu + used.cpu, sum.voluntary + used.voluntary, sum.involuntary + used.involuntary}
			}
			perRequest, voluntary, involuntary := 0.0, 0.0, 0.0
			if count > 0 {
				perRequest = float64(micros(sum.cpu)) / float64(count)
				voluntary, involuntary = float64(sum.voluntary)/float64(count), float64(sum.involuntary)/float64(count)
			}
			out["server_cpu"] = map[string]any{"us_per_request": perRequest, "processes_us": processes,
				"context_switches_per_request": map[string]any{"voluntary": voluntary, "involuntary": involuntary}}
			summary += fmt.Sprintf(", server CPU %.1f µs/request", perRequest)
		}
	}
	encoded, _ := json.Marshal(out)
	fmt.Println(string(encoded))
	fmt.Fprintln(os.Stderr, summary)
	if errorCount > 0 || count == 0 {
		os.Exit(1)
	}
}
