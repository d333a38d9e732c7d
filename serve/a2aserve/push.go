package a2aserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/push"

	"github.com/agcore/agcore/session"
)

// Push notifications. A task's owner registers webhooks
// (tasks/pushNotificationConfig/set, or configuration.pushNotificationConfig
// of message/send); each is kept with the task (in the store's records,
// agcore.a2a.push/AGENT/TASK/CONFIG, or in memory), and every change of
// the task's state is POSTed to it (the task as JSON, the config's token
// in X-A2A-Notification-Token, its credentials in Authorization), in
// order, retried with backoff, by whichever process writes the change:
// the one running the turn, or the one following it for its client (a
// decision sent to another process). A task's configs are read from the
// store again at every change of its state (whichever process set them);
// a change two processes both write (the turn's end, stored by the one
// and answered by the other) is sent once: its notification is claimed
// in the store first (agcore.a2a.pushed/TASK/CONFIG/STATE@TIME).
const (
	pushNamespace = "agcore.a2a.push"
	// pushedNamespace holds the notifications claimed (sent or being
	// sent), for pushedRetention.
	pushedNamespace = "agcore.a2a.pushed"
	pushedRetention = time.Hour
	// pushAttempts bounds the deliveries of one notification.
	pushAttempts = 6
	// pushBackoff is the wait before the second attempt, doubled after
	// each (with jitter): 0.5, 1, 2, 4, 8 s.
	pushBackoff = 500 * time.Millisecond
	// pushTimeout bounds one delivery.
	pushTimeout = 10 * time.Second
)

// ErrPushURLRefused is the error (wrapped, with a2a.ErrInvalidParams) of a
// webhook URL that is not allowed: not http or https, or a host that is
// or resolves to a private, loopback, link-local, multicast or
// unspecified address, unless the operator allows the host
// (Options.PushAllowHosts).
var ErrPushURLRefused = errors.New("a2aserve: push notification URL refused")

// pushPolicy checks webhook URLs against server-side request forgery.
type pushPolicy struct {
	allow map[string]bool // hosts the operator allows, lower case, without port
}

func newPushPolicy(hosts []string) pushPolicy {
	p := pushPolicy{allow: map[string]bool{}}
	for _, h := range hosts {
		p.allow[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	return p
}

// forbidden reports whether ip may not be reached by a webhook.
func forbidden(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip) || // carrier-grade NAT
		netip.MustParsePrefix("0.0.0.0/8").Contains(ip)
}

// check validates a webhook URL: its scheme, and its host's addresses
// (resolved now; each connection is checked again, so a name that
// resolves elsewhere later is refused then).
func (p pushPolicy) check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return fmt.Errorf("%w: %w: want an http or https URL with a host and no credentials", a2a.ErrInvalidParams, ErrPushURLRefused)
	}
	host := strings.ToLower(u.Hostname())
	if p.allow[host] {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if forbidden(ip) {
			return fmt.Errorf("%w: %w: %s is a private, loopback or link-local address (an operator may allow it)", a2a.ErrInvalidParams, ErrPushURLRefused, host)
		}
		return nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("%w: %w: %s does not resolve", a2a.ErrInvalidParams, ErrPushURLRefused, host)
	}
	for _, ip := range ips {
		if forbidden(ip) {
			return fmt.Errorf("%w: %w: %s resolves to a private, loopback or link-local address (an operator may allow it)", a2a.ErrInvalidParams, ErrPushURLRefused, host)
		}
	}
	return nil
}

// client returns the HTTP client of the deliveries: every connection's
// address is checked as it is dialled (unless the URL's host is allowed),
// and redirects are not followed.
func (p pushPolicy) client() *http.Client {
	dial := func(allowed bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := &net.Dialer{Timeout: pushTimeout}
		if !allowed {
			d.Control = func(_, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil || forbidden(ap.Addr()) {
					return fmt.Errorf("%w: %s", ErrPushURLRefused, address)
				}
				return nil
			}
		}
		return d.DialContext
	}
	open, allowed := dial(false), dial(true)
	tr := &http.Transport{
		Proxy: nil, // a proxy would dial for us, unchecked
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			if p.allow[strings.ToLower(host)] {
				return allowed(ctx, network, addr)
			}
			return open(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: pushTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// pushConfigs is an a2asrv.PushConfigStore of one agent, over a store's
// records or in memory. Save checks the URL (pushPolicy).
type pushConfigs struct {
	policy pushPolicy
	recs   session.Records // nil: in memory
	agent  string

	mu  sync.Mutex
	mem map[a2a.TaskID]map[string]*a2a.PushConfig
	// listed caches, for pushListTTL, what List read from the records: the
	// SDK lists a task's configs at every event of its execution (each
	// streamed delta), which must not be a store query each.
	listed map[a2a.TaskID]listedConfigs
}

type listedConfigs struct {
	configs []*a2a.PushConfig
	at      time.Time
}

// pushListTTL is how long a task's configs read from the store are
// reused: a config set through another process is used within it.
const pushListTTL = time.Second

func (s *pushConfigs) forget(task a2a.TaskID) {
	s.mu.Lock()
	delete(s.listed, task)
	s.mu.Unlock()
}

func (s *pushConfigs) prefix(task a2a.TaskID) string { return s.agent + "/" + string(task) + "/" }

// Save implements a2asrv.PushConfigStore.
func (s *pushConfigs) Save(ctx context.Context, task a2a.TaskID, config *a2a.PushConfig) (*a2a.PushConfig, error) {
	if config == nil || task == "" {
		return nil, a2a.ErrInvalidParams
	}
	if err := s.policy.check(ctx, config.URL); err != nil {
		return nil, err
	}
	c := *config
	if c.ID == "" {
		c.ID = a2a.NewContextID() // a random UUID
	}
	if s.recs == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.mem == nil {
			s.mem = map[a2a.TaskID]map[string]*a2a.PushConfig{}
		}
		if s.mem[task] == nil {
			s.mem[task] = map[string]*a2a.PushConfig{}
		}
		s.mem[task][c.ID] = &c
		return &c, nil
	}
	v, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	key := s.prefix(task) + c.ID
	if err := session.CheckRecord(pushNamespace, key); err != nil {
		return nil, fmt.Errorf("%w: %v", a2a.ErrInvalidParams, err)
	}
	if _, err := s.recs.PutRecord(ctx, pushNamespace, session.Record{Key: key, Value: v, Expires: time.Now().Add(taskRetention)}); err != nil {
		return nil, err
	}
	s.forget(task)
	return &c, nil
}

// Get implements a2asrv.PushConfigStore.
func (s *pushConfigs) Get(ctx context.Context, task a2a.TaskID, id string) (*a2a.PushConfig, error) {
	all, err := s.List(ctx, task)
	if err != nil {
		return nil, err
	}
	for _, c := range all {
		if c.ID == id || id == "" {
			return c, nil
		}
	}
	return nil, push.ErrPushConfigNotFound
}

// List implements a2asrv.PushConfigStore.
func (s *pushConfigs) List(ctx context.Context, task a2a.TaskID) ([]*a2a.PushConfig, error) {
	if s.recs == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		var out []*a2a.PushConfig
		for _, c := range s.mem[task] {
			cc := *c
			out = append(out, &cc)
		}
		slices.SortFunc(out, func(a, b *a2a.PushConfig) int { return strings.Compare(a.ID, b.ID) })
		return out, nil
	}
	s.mu.Lock()
	if l, ok := s.listed[task]; ok && time.Since(l.at) < pushListTTL {
		s.mu.Unlock()
		return copyConfigs(l.configs), nil
	}
	s.mu.Unlock()
	recs, err := s.recs.ListRecords(ctx, pushNamespace, s.prefix(task))
	if err != nil {
		return nil, err
	}
	out := make([]*a2a.PushConfig, 0, len(recs))
	for _, r := range recs {
		var c a2a.PushConfig
		if json.Unmarshal(r.Value, &c) == nil {
			out = append(out, &c)
		}
	}
	s.mu.Lock()
	if s.listed == nil {
		s.listed = map[a2a.TaskID]listedConfigs{}
	}
	for id, l := range s.listed { // keep the cache small: drop what expired
		if time.Since(l.at) >= pushListTTL {
			delete(s.listed, id)
		}
	}
	s.listed[task] = listedConfigs{configs: out, at: time.Now()}
	s.mu.Unlock()
	return copyConfigs(out), nil
}

func copyConfigs(in []*a2a.PushConfig) []*a2a.PushConfig {
	out := make([]*a2a.PushConfig, len(in))
	for i, c := range in {
		cc := *c
		out[i] = &cc
	}
	return out
}

// Delete implements a2asrv.PushConfigStore.
func (s *pushConfigs) Delete(ctx context.Context, task a2a.TaskID, id string) error {
	if s.recs == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.mem[task], id)
		return nil
	}
	err := s.recs.DeleteRecord(ctx, pushNamespace, s.prefix(task)+id, 0)
	s.forget(task)
	if errors.Is(err, session.ErrNotFound) {
		return nil
	}
	return err
}

// DeleteAll implements a2asrv.PushConfigStore.
func (s *pushConfigs) DeleteAll(ctx context.Context, task a2a.TaskID) error {
	all, err := s.List(ctx, task)
	if err != nil {
		return err
	}
	for _, c := range all {
		if err := s.Delete(ctx, task, c.ID); err != nil {
			return err
		}
	}
	return nil
}

var _ a2asrv.PushConfigStore = (*pushConfigs)(nil)

// pushSender is the a2asrv.PushSender of the handler: it sends a task to
// a webhook when its state changed since the last notification to that
// webhook from this process, in the background (the turn never waits for
// a webhook), in order per webhook, each retried with backoff; it never
// fails the task.
type pushSender struct {
	client *http.Client
	log    *slog.Logger

	mu     sync.Mutex
	last   map[string]a2a.TaskState     // by task and config: the state last queued
	queues map[string]chan notification // by task and config: the notifications to deliver
}

// notification is one delivery to make: the task's JSON, and, with
// tasks in a shared store, its claim (claimed, keyed claimKey) so that
// another process writing the same change does not send it too.
type notification struct {
	body     []byte
	recs     session.Records
	claimKey string
}

// claimed reports whether this process is the one to send n: the first
// to create its claim (or the store cannot tell: then it is sent).
func (n notification) claimed() bool {
	if n.recs == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), pushTimeout)
	defer cancel()
	_, err := n.recs.CreateRecord(ctx, pushedNamespace, session.Record{Key: n.claimKey, Value: []byte("{}"), Expires: time.Now().Add(pushedRetention)})
	return !errors.Is(err, session.ErrExists)
}

// agentPush is the a2asrv.PushSender of one agent: the handler's sender,
// claiming each notification in the agent's records (nil: in memory).
type agentPush struct {
	*pushSender
	recs session.Records
	// remote, when not nil, reports a task whose turn runs in another
	// process: the SDK's notifications of it are skipped (what runs the
	// turn sends them: TaskWriter).
	remote func(a2a.TaskID) bool
}

// SendPush implements a2asrv.PushSender.
func (a agentPush) SendPush(_ context.Context, config *a2a.PushConfig, task *a2a.Task) error {
	if a.remote != nil && a.remote(task.ID) {
		return nil
	}
	return a.send(config, task, a.recs)
}

// notifyAll sends t to each push notification config of its task (read
// through configs) with s, claimed in recs: a change this process stored
// itself, past the SDK (whose notifications of remote tasks are skipped).
func (s *pushSender) notifyAll(ctx context.Context, configs *pushConfigs, recs session.Records, t *a2a.Task) {
	if s == nil || configs == nil {
		return
	}
	list, err := configs.List(ctx, t.ID)
	if err != nil {
		s.log.Warn("a2a: reading a task's push notification configs", "task", t.ID, "err", err)
		return
	}
	for _, c := range list {
		_ = s.send(c, t, recs) // queued: it never fails the task
	}
}

func newPushSender(policy pushPolicy, log *slog.Logger) *pushSender {
	return &pushSender{client: policy.client(), log: log, last: map[string]a2a.TaskState{}, queues: map[string]chan notification{}}
}

// SendPush implements a2asrv.PushSender, with no claims (tasks in
// memory).
func (s *pushSender) SendPush(_ context.Context, config *a2a.PushConfig, task *a2a.Task) error {
	return s.send(config, task, nil)
}

// send queues the notification of task to config when its state changed;
// with recs, it is delivered only if this process claims it there first.
func (s *pushSender) send(config *a2a.PushConfig, task *a2a.Task, recs session.Records) error {
	key := string(task.ID) + "\x00" + config.ID + "\x00" + config.URL
	s.mu.Lock()
	if s.last[key] == task.Status.State {
		s.mu.Unlock()
		return nil // not a change of state
	}
	s.last[key] = task.Status.State
	body, err := json.Marshal(task)
	if err != nil {
		s.mu.Unlock()
		return nil
	}
	n := notification{body: body}
	if recs != nil {
		var at int64
		if task.Status.Timestamp != nil {
			at = task.Status.Timestamp.UnixNano()
		}
		n.recs, n.claimKey = recs, fmt.Sprintf("%s/%s/%s@%d", task.ID, config.ID, task.Status.State, at)
		if session.CheckRecord(pushedNamespace, n.claimKey) != nil {
			n.recs = nil // too long a key to claim: sent unclaimed
		}
	}
	q := s.queues[key]
	if q == nil {
		q = make(chan notification, 64)
		s.queues[key] = q
		go s.deliver(key, *config, q)
	}
	final := task.Status.State.Terminal()
	if final {
		delete(s.last, key)
		delete(s.queues, key)
	}
	s.mu.Unlock()
	select {
	case q <- n:
	default:
		s.log.Warn("a2a: push notifications queued too deep; one dropped", "task", task.ID)
	}
	if final {
		close(q)
	}
	return nil
}

// deliver posts the notifications of one webhook in order until q is
// closed and drained.
func (s *pushSender) deliver(key string, config a2a.PushConfig, q <-chan notification) {
	for n := range q {
		if !n.claimed() {
			continue // another process sends it
		}
		wait := pushBackoff
		for attempt := 1; ; attempt++ {
			err := s.post(config, n.body)
			if err == nil {
				break
			}
			if attempt == pushAttempts || errors.Is(err, ErrPushURLRefused) {
				s.log.Warn("a2a: push notification not delivered", "url", redactURL(config.URL), "attempts", attempt, "error", err.Error())
				break
			}
			time.Sleep(wait/2 + rand.N(wait/2+1))
			wait *= 2
		}
	}
	_ = key
}

func (s *pushSender) post(config a2a.PushConfig, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), pushTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, config.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrPushURLRefused, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if config.Token != "" {
		req.Header.Set("X-A2A-Notification-Token", config.Token)
	}
	if config.Auth != nil && config.Auth.Credentials != "" {
		for _, scheme := range config.Auth.Schemes {
			if s := strings.ToLower(scheme); s == "bearer" || s == "basic" {
				req.Header.Set("Authorization", strings.ToUpper(s[:1])+s[1:]+" "+config.Auth.Credentials)
				break
			}
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrPushURLRefused) {
			return err
		}
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return nil
}

// redactURL is a webhook URL for the log: scheme and host only.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Scheme + "://" + u.Host
}

var (
	_ a2asrv.PushSender = (*pushSender)(nil)
	_ a2asrv.PushSender = agentPush{}
)
