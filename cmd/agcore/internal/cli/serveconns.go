package cli

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// unusedConnWait is how long, once the server stops, a connection that
// has not sent its request yet has to send it before it is closed.
const unusedConnWait = 100 * time.Millisecond

// unusedConns tracks a server's connections that have not sent a request
// yet. Browsers and HTTP clients open such connections ahead of need;
// http.Server.Shutdown counts them as active for 5 s, so an idle server
// would wait its whole drain grace for them. closeOnShutdown closes them
// soon after the listeners are closed instead (a keep-alive connection
// between requests is closed at once by Shutdown itself).
type unusedConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// closeUnusedOnShutdown makes srv's Shutdown close the connections that
// have sent no request after unusedConnWait. It sets srv.ConnState.
func closeUnusedOnShutdown(srv *http.Server) {
	u := &unusedConns{conns: map[net.Conn]struct{}{}}
	srv.ConnState = u.state
	srv.RegisterOnShutdown(func() {
		// The listeners are closed: no connection is added. A request on
		// its way gets a moment to arrive (it is then answered: 503 while
		// draining, or its turn).
		time.Sleep(unusedConnWait)
		u.mu.Lock()
		defer u.mu.Unlock()
		for c := range u.conns {
			c.Close()
			delete(u.conns, c)
		}
	})
}

func (u *unusedConns) state(c net.Conn, st http.ConnState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if st == http.StateNew {
		u.conns[c] = struct{}{}
	} else {
		delete(u.conns, c)
	}
}
