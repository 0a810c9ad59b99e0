package server

import (
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/regionkv/regionkv/region"
)

// openScanner is a client's scanner between calls: HBase's
// RegionScannerHolder, with its lease.
type openScanner struct {
	id uint64
	hr *hostedRegion
	sc *region.Scanner
	// mu serializes calls on the scanner (one client, but retries and
	// renewals can overlap).
	mu sync.Mutex
	// nextCallSeq is the next_call_seq the client must send.
	nextCallSeq uint64
	// lastAccess is guarded by scannerLeases.mu.
	lastAccess time.Time
	closed     bool // guarded by mu
	// rows counts rows returned, for the scan's limit; limit is 0 if none.
	rows, limit int
	// reported is the part of the metrics already sent.
	reported region.ScanMetrics
	// maxResultSize bounds the bytes of one response.
	maxResultSize int64
	// filterAll reports whether the scan's filter says no later row can
	// pass (then the whole scan is over, not just this region).
	filterAll func() bool
	// res is the row a call reads with NextInto when its cells go into the
	// cellblock at once (guarded by mu).
	res region.ScanResult
}

// movedScanner is a scanner closed with its region: when, and the region.
type movedScanner struct {
	at     time.Time
	region string
}

// scannerLeases holds open scanners and expires the idle ones after the
// lease period (hbase.client.scanner.timeout.period), as HBase's Leases.
type scannerLeases struct {
	timeout time.Duration
	log     *slog.Logger
	mu      sync.Mutex
	byID    map[uint64]*openScanner
	// closed remembers scanners the server closed (exhausted, closed on
	// request, or after an error) for one lease period after their last
	// call, as HBase's closedScanners: a late next or close for one gets
	// an empty response rather than UnknownScannerException, since clients
	// send one more call after the last results.
	closed map[uint64]time.Time
	// moved remembers, for one lease period, the scanners closed because
	// their region closed (split, merged, disabled): a next for one is
	// answered NotServingRegionException, as HBase answers a scanner of a
	// region no longer online, so the client reopens its scan after its
	// last row in the region that now holds it.
	moved   map[uint64]movedScanner
	stop    chan struct{}
	done    chan struct{}
	expired int64 // leases that ran out, for metrics
}

func newScannerLeases(timeout time.Duration, log *slog.Logger) *scannerLeases {
	l := &scannerLeases{timeout: timeout, log: log, byID: map[uint64]*openScanner{},
		closed: map[uint64]time.Time{}, moved: map[uint64]movedScanner{}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.reaper()
	return l
}

func (l *scannerLeases) reaper() {
	defer close(l.done)
	period := max(min(l.timeout/4, time.Second), 10*time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			var dead []*openScanner
			l.mu.Lock()
			for id, os := range l.byID {
				if now.Sub(os.lastAccess) > l.timeout {
					delete(l.byID, id)
					l.expired++
					dead = append(dead, os)
				}
			}
			for id, at := range l.closed {
				if now.Sub(at) > l.timeout {
					delete(l.closed, id)
				}
			}
			for id, m := range l.moved {
				if now.Sub(m.at) > l.timeout {
					delete(l.moved, id)
				}
			}
			l.mu.Unlock()
			for _, os := range dead {
				l.log.Info("scanner lease expired", "scanner", os.id, "region", os.hr.info.EncodedName())
				os.close()
			}
		}
	}
}

// add registers a new scanner and returns it with a fresh id.
func (l *scannerLeases) add(hr *hostedRegion, sc *region.Scanner) *openScanner {
	l.mu.Lock()
	defer l.mu.Unlock()
	var id uint64
	for id == 0 || l.byID[id] != nil || !l.closed[id].IsZero() || !l.moved[id].at.IsZero() {
		// Random ids, as HBase's, so a stale id from before a restart is
		// unlikely to name a new scanner.
		id = rand.Uint64() >> 1
	}
	os := &openScanner{id: id, hr: hr, sc: sc, lastAccess: time.Now()}
	l.byID[id] = os
	return os
}

// get returns the scanner and renews its lease, or nil if unknown or
// expired.
func (l *scannerLeases) get(id uint64) *openScanner {
	l.mu.Lock()
	defer l.mu.Unlock()
	os := l.byID[id]
	if os == nil {
		return nil
	}
	if time.Since(os.lastAccess) > l.timeout {
		// The reaper has not run yet; the lease is over all the same.
		delete(l.byID, id)
		l.expired++
		go os.close()
		return nil
	}
	os.lastAccess = time.Now()
	return os
}

// regionClosed returns the name of scanner id's region if the scanner was
// closed within the last lease period because that region closed.
func (l *scannerLeases) regionClosed(id uint64) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.moved[id]
	if !ok || time.Since(m.at) > l.timeout {
		return "", false
	}
	return m.region, true
}

// recentlyClosed reports whether the server closed scanner id within the
// last lease period, and renews that memory (HBase expires it after the
// last access).
func (l *scannerLeases) recentlyClosed(id uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.closed[id]
	if !ok || time.Since(at) > l.timeout {
		return false
	}
	l.closed[id] = time.Now()
	return true
}

// touch renews a lease at the end of a call, so a slow call does not eat
// into the client's idle time.
func (l *scannerLeases) touch(os *openScanner) {
	l.mu.Lock()
	os.lastAccess = time.Now()
	l.mu.Unlock()
}

// remove forgets and closes a scanner. The caller holds os.mu (see
// locked).
func (l *scannerLeases) remove(os lockedScanner) {
	l.mu.Lock()
	delete(l.byID, os.id)
	l.closed[os.id] = time.Now()
	l.mu.Unlock()
	if !os.closed {
		os.closed = true
		os.sc.Close()
	}
}

// lockedScanner is an openScanner whose mu the holder has locked.
type lockedScanner struct{ *openScanner }

// locked marks os as locked by the caller, for remove.
func (os *openScanner) locked() lockedScanner { return lockedScanner{os} }

// closeRegion closes every scanner of hr (the region is closing).
func (l *scannerLeases) closeRegion(hr *hostedRegion) {
	var dead []*openScanner
	now := time.Now()
	l.mu.Lock()
	for id, os := range l.byID {
		if os.hr == hr {
			delete(l.byID, id)
			l.moved[id] = movedScanner{at: now, region: string(hr.name)}
			dead = append(dead, os)
		}
	}
	l.mu.Unlock()
	for _, os := range dead {
		os.close()
	}
}

func (l *scannerLeases) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byID)
}

func (l *scannerLeases) close() {
	select {
	case <-l.stop:
		return
	default:
	}
	close(l.stop)
	<-l.done
	l.mu.Lock()
	all := l.byID
	l.byID = map[uint64]*openScanner{}
	l.mu.Unlock()
	for _, os := range all {
		os.close()
	}
}

func (os *openScanner) close() {
	os.mu.Lock()
	defer os.mu.Unlock()
	if !os.closed {
		os.closed = true
		os.sc.Close()
	}
}
