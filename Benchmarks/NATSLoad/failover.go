// The fail-over side of natsload (issue 25): JetStream R3 under retrying publishers while the
// stream leader's server is killed, measured the way Benchmarks/failover_writers.py measures
// Lyceum's replicated partitions.
//
//	natsload failover -url URLS -stream NAME -subject S -replicas 3 -publishers N -size B -acks FILE [-progress FILE]
//	    creates the file stream (R replicas), then N publishers (one connection each) publish one
//	    message at a time, each with a message id (Nats-Msg-Id: the stream's de-duplication makes a
//	    retry of an acknowledged message harmless) and retried, AckWait 2 s, 50 ms apart, until
//	    acknowledged; "publishing" on stderr after the first ack. On SIGTERM or SIGINT: every
//	    acknowledgement, "UNIX_NS PUBLISHER" a line, goes to FILE, the stream is read back and a JSON
//	    summary printed: acknowledged, lost (acknowledged ids not in the stream), duplicated. The
//	    -progress file holds the count of acknowledgements so far, rewritten every 200 ms.
//	natsload leader -url URLS -stream NAME [-settled] [-timeout T]
//	    prints the server name leading the stream; with -settled, first waits until it has a leader
//	    and every replica is current and online (after a restart: caught up).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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

// failoverOptions are the flags of the failover and leader modes.
type failoverOptions struct {
	url        string
	stream     string
	subject    string
	replicas   int
	publishers int
	size       int
	acks       string
	progress   string
	settled    bool
	timeout    time.Duration
}

// writeProgress replaces the file at path with count, so that a reader never sees half of it.
func writeProgress(path string, count int) {
	if os.WriteFile(path+".new", []byte(strconv.Itoa(count)+"\n"), 0o644) == nil {
		_ = os.Rename(path+".new", path)
	}
}

// acknowledgement is when a publisher's message was acknowledged (Unix ns).
type acknowledgement struct {
	at        int64
	publisher int
}

// connectRetrying connects with a short reconnect wait and no limit on reconnects, as a client
// meant to survive a server's death would.
func connectRetrying(url, name string) *nats.Conn {
	conn, err := nats.Connect(url, nats.Name(name), nats.ReconnectWait(100*time.Millisecond), nats.MaxReconnects(-1),
		nats.Timeout(time.Second), nats.RetryOnFailedConnect(true))
	if err != nil {
		fail("cannot connect to %s: %v", url, err)
	}
	return conn
}

// failover runs the publishers until a signal, then writes the acknowledgement times and reads
// the stream back.
func failover(options failoverOptions) {
	if options.publishers < 1 || options.acks == "" {
		fail("failover needs -publishers ≥ 1 and -acks FILE")
	}
	prepareStream(options.url, options.stream, options.subject, options.replicas)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	var stopping atomic.Bool
	var mutex sync.Mutex
	var acknowledged []acknowledgement
	ids := map[string]bool{}
	var first sync.Once
	var group sync.WaitGroup
	body := make([]byte, options.size)
	for i := range body {
		body[i] = 'x'
	}
	for p := 0; p < options.publishers; p++ {
		group.Add(1)
		go func(p int) {
			defer group.Done()
			conn := connectRetrying(options.url, fmt.Sprintf("natsload publisher %d", p))
			defer conn.Close()
			js, err := conn.JetStream()
			if err != nil {
				fail("no JetStream context: %v", err)
			}
			for n := 1; !stopping.Load(); n++ {
				id := fmt.Sprintf("p%d-%d", p, n)
				for !stopping.Load() {
					_, err := js.Publish(options.subject, body, nats.MsgId(id), nats.AckWait(2*time.Second), nats.RetryAttempts(0))
					if err == nil {
						at := time.Now().UnixNano()
						mutex.Lock()
						acknowledged = append(acknowledged, acknowledgement{at, p})
						ids[id] = true
						mutex.Unlock()
						first.Do(func() { fmt.Fprintln(os.Stderr, "natsload: publishing") })
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}(p)
	}
	if options.progress != "" {
		go func() {
			for range time.Tick(200 * time.Millisecond) {
				mutex.Lock()
				count := len(acknowledged)
				mutex.Unlock()
				writeProgress(options.progress, count)
			}
		}()
	}
	<-stop
	stopping.Store(true)
	group.Wait()

	sort.Slice(acknowledged, func(i, j int) bool { return acknowledged[i].at < acknowledged[j].at })
	file, err := os.Create(options.acks)
	if err != nil {
		fail("cannot write %s: %v", options.acks, err)
	}
	writer := bufio.NewWriter(file)
	for _, ack := range acknowledged {
		fmt.Fprintln(writer, ack.at, ack.publisher)
	}
	if err := writer.Flush(); err != nil {
		fail("cannot write %s: %v", options.acks, err)
	}
	file.Close()

	stored, messages := readBack(options)
	lost, duplicated := 0, 0
	for id := range ids {
		if stored[id] == 0 {
			lost++
		}
	}
	for _, count := range stored {
		if count > 1 {
			duplicated++
		}
	}
	encoded, _ := json.Marshal(map[string]any{
		"acknowledged": len(acknowledged), "lost": lost, "duplicated": duplicated, "stream_messages": messages,
		"publishers": options.publishers, "replicas": options.replicas,
	})
	fmt.Println(string(encoded))
	fmt.Fprintf(os.Stderr, "natsload: %d acknowledged, %d in the stream, %d lost, %d duplicated\n", len(acknowledged), messages, lost, duplicated)
}

// readBack counts every message id in the stream: through an ordered consumer from the start,
// then, for any sequence it did not deliver, by a direct get of that sequence. Returns the counts
// and the messages the stream's state says it holds.
func readBack(options failoverOptions) (map[string]int, uint64) {
	conn := connectRetrying(options.url, "natsload reader")
	defer conn.Close()
	js, err := conn.JetStream()
	if err != nil {
		fail("no JetStream context: %v", err)
	}
	var info *nats.StreamInfo
	deadline := time.Now().Add(options.timeout)
	for info, err = js.StreamInfo(options.stream); err != nil; info, err = js.StreamInfo(options.stream) {
		if time.Now().After(deadline) {
			fail("stream %s: %v", options.stream, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	stored := map[string]int{}
	seen := map[uint64]bool{}
	subscription, err := js.SubscribeSync(options.subject, nats.OrderedConsumer(), nats.DeliverAll())
	if err != nil {
		fail("cannot read %s back: %v", options.stream, err)
	}
	for uint64(len(seen)) < info.State.Msgs {
		msg, err := subscription.NextMsg(10 * time.Second)
		if err != nil {
			break
		}
		metadata, err := msg.Metadata()
		if err != nil || seen[metadata.Sequence.Stream] {
			continue
		}
		seen[metadata.Sequence.Stream] = true
		stored[msg.Header.Get(nats.MsgIdHdr)]++
	}
	_ = subscription.Unsubscribe()
	for sequence := info.State.FirstSeq; sequence <= info.State.LastSeq && info.State.Msgs > 0; sequence++ {
		if seen[sequence] {
			continue
		}
		if raw, err := js.GetMsg(options.stream, sequence); err == nil {
			seen[sequence] = true
			stored[raw.Header.Get(nats.MsgIdHdr)]++
		}
	}
	if uint64(len(seen)) != info.State.Msgs {
		fmt.Fprintf(os.Stderr, "natsload: read %d messages back, the stream's state says %d\n", len(seen), info.State.Msgs)
	}
	return stored, info.State.Msgs
}

// leader prints the stream leader's server name (after it settles, with options.settled).
func leader(options failoverOptions) {
	conn := connectRetrying(options.url, "natsload leader")
	defer conn.Close()
	js, err := conn.JetStream()
	if err != nil {
		fail("no JetStream context: %v", err)
	}
	deadline := time.Now().Add(options.timeout)
	for {
		info, err := js.StreamInfo(options.stream, nats.MaxWait(time.Second))
		if err == nil && info.Cluster != nil && info.Cluster.Leader != "" && (!options.settled || settled(info.Cluster)) {
			fmt.Println(info.Cluster.Leader)
			return
		}
		if time.Now().After(deadline) {
			state := "no answer"
			if err != nil {
				state = err.Error()
			} else if info.Cluster != nil {
				encoded, _ := json.Marshal(info.Cluster)
				state = string(encoded)
			}
			fail("stream %s not settled after %v: %s", options.stream, options.timeout, strings.TrimSpace(state))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// settled: every replica but the leader is online and current.
func settled(cluster *nats.ClusterInfo) bool {
	for _, peer := range cluster.Replicas {
		if peer.Offline || !peer.Current {
			return false
		}
	}
	return true
}
