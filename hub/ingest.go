package hub

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"fieldkit/observe"
	"fieldkit/store"
	"fieldkit/web"
)

// Ingest takes the sites' pushes on a hub: PushPath, authenticated by a site's token.
type Ingest struct {
	db     *store.DB
	logger *slog.Logger
	now    func() time.Time
	// slots bounds the pushes read and applied at once; one more is told to come back
	// (429): each holds its body in memory, and they queue for the writer anyway.
	slots chan struct{}
	// stopping is closed when the server stops (Stop): the sites' long polls answer at
	// once instead of holding the stop up to their wait.
	stopping chan struct{}
	stopOnce sync.Once
	// Stored, when set before the first push, is called after a push stored records
	// (serve: the events processor's Poke).
	Stored func()
}

// pushSlots is how many pushes a hub takes at once.
const pushSlots = 4

// bodyTime is how long a push may take to arrive: a large batch over a site's slow link.
const bodyTime = 5 * time.Minute

// NewIngest is the hub's side of the protocol.
func NewIngest(db *store.DB, logger *slog.Logger) *Ingest {
	return &Ingest{db: db, logger: logger, now: func() time.Time { return time.Now().UTC() }, slots: make(chan struct{}, pushSlots),
		stopping: make(chan struct{})}
}

// Stop answers the sites' polls that wait for a job (none came), now and from now on,
// so that a hub that stops does not wait out their waits (up to 30 s); serve calls it
// when its HTTP server begins to shut down.
func (in *Ingest) Stop() { in.stopOnce.Do(func() { close(in.stopping) }) }

// refuse is an error answer of the protocol: its status, with an Answer for a body.
func refuse(status int, a Answer) *web.Error {
	a.Protocol = Protocol
	e := &web.Error{Status: status, Body: a, Header: http.Header{ProtocolHeader: {strconv.Itoa(Protocol)}}}
	if status == http.StatusUnauthorized {
		e.Header.Set("WWW-Authenticate", "Bearer")
	}
	return e
}

// Push stores a batch of a site's records and answers what the hub holds.
func (in *Ingest) Push(w http.ResponseWriter, r *http.Request) error {
	if v, err := strconv.Atoi(r.Header.Get(ProtocolHeader)); err == nil && v > Protocol {
		return refuse(http.StatusUpgradeRequired, Answer{Detail: fmt.Sprintf(
			"This hub speaks protocol %d, the site %d: upgrade the hub. The site keeps its records meanwhile.", Protocol, v)})
	}
	site, err := in.authenticate(r)
	if err != nil {
		return err
	}
	select {
	case in.slots <- struct{}{}:
		defer func() { <-in.slots }()
	default:
		e := refuse(http.StatusTooManyRequests, Answer{Detail: "The hub is busy: push again after Retry-After seconds."})
		e.Header.Set("Retry-After", "2")
		return e
	}
	b, err := readBatch(w, r)
	if err != nil {
		return err
	}
	if b.Protocol > Protocol {
		return refuse(http.StatusUpgradeRequired, Answer{Detail: fmt.Sprintf("This hub speaks protocol %d, the site %d.", Protocol, b.Protocol)})
	}
	ans, err := in.store(r.Context(), site, b)
	if err != nil {
		return err
	}
	if ans.Applied > 0 && in.Stored != nil {
		in.Stored() // the logs' events wait in the outbox, written with them
	}
	w.Header().Set(ProtocolHeader, strconv.Itoa(Protocol))
	web.Write(w, http.StatusOK, ans)
	return nil
}

// authenticate finds the site of the request's token: 401 for none, an unknown one or
// a revoked one.
func (in *Ingest) authenticate(r *http.Request) (store.HubSite, error) {
	auth := r.Header.Get("Authorization")
	token := ""
	for _, scheme := range []string{"Bearer ", "Token "} {
		if t, ok := strings.CutPrefix(auth, scheme); ok {
			token = strings.TrimSpace(t)
		}
	}
	if token == "" {
		return store.HubSite{}, refuse(http.StatusUnauthorized, Answer{Detail: "A site token is needed (hub.token)."})
	}
	site, err := in.db.HubSiteByToken(r.Context(), token)
	if errors.Is(err, store.ErrNotFound) {
		return site, refuse(http.StatusUnauthorized, Answer{Detail: "Invalid site token."})
	}
	if err != nil {
		return site, err
	}
	if site.Revoked {
		return site, refuse(http.StatusUnauthorized, Answer{Detail: fmt.Sprintf("The token of site %q was revoked.", site.Name)})
	}
	observe.SetUser(r, "site:"+site.Name)
	return site, nil
}

// readBatch reads and checks a push's body: gzip (or plain) JSON of at most
// MaxBodyBytes either way.
func readBatch(w http.ResponseWriter, r *http.Request) (Batch, error) {
	var b Batch
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTime)) // a recorder has none
	tooLarge := refuse(http.StatusRequestEntityTooLarge, Answer{MaxBytes: MaxBodyBytes,
		Detail: fmt.Sprintf("A push may carry at most %d bytes: split it.", MaxBodyBytes)})
	var body io.Reader = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return b, web.Invalid("The body is not gzip.")
		}
		body = zr
	}
	raw, err := io.ReadAll(io.LimitReader(body, MaxBodyBytes+1))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe), len(raw) > MaxBodyBytes:
		return b, tooLarge
	case err != nil:
		return b, web.Invalid("Could not read the body: " + err.Error())
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&b); err != nil {
		return b, web.Invalid("The body is not a batch: " + err.Error())
	}
	return b, checkBatch(b)
}

// checkBatch refuses a batch the protocol does not allow (400).
func checkBatch(b Batch) error {
	switch {
	case b.Protocol < 1:
		return web.BadRequest("protocol", "A batch names its protocol version (1 or more).")
	case b.Epoch == "" || len(b.Epoch) > 64:
		return web.BadRequest("epoch", "A batch names its epoch (1 to 64 characters).")
	case len(b.Instance) > 64:
		return web.BadRequest("instance", "At most 64 characters.")
	case b.EpochStart < 1:
		return web.BadRequest("epoch_start", "The first record of an epoch is 1 or more.")
	case len(b.Records) > MaxRecords:
		return web.BadRequest("records", fmt.Sprintf("At most %d records a batch.", MaxRecords))
	}
	for i, rec := range b.Records {
		at := fmt.Sprintf("records[%d]", i)
		switch {
		case rec.Seq < b.EpochStart || (i > 0 && rec.Seq != b.Records[i-1].Seq+1):
			return web.BadRequest(at, "Records are consecutive, from epoch_start on.")
		case !knownKind(rec.Kind):
			return web.BadRequest(at, fmt.Sprintf("Unknown kind %q.", rec.Kind))
		case rec.Op != store.OpUpsert && rec.Op != store.OpDelete:
			return web.BadRequest(at, fmt.Sprintf("Unknown op %q.", rec.Op))
		case rec.Op == store.OpUpsert && len(rec.Body) == 0:
			return web.BadRequest(at, "An upsert carries its body.")
		}
	}
	return nil
}

func knownKind(k string) bool {
	switch k {
	case store.KindLog, store.KindDevice, store.KindPlatform, store.KindCommand, store.KindSnapshot, store.KindJob:
		return true
	}
	return false
}

// store applies a batch in one transaction: duplicates (records the hub holds
// already) are counted and skipped, a gap is refused with the record expected, and
// every new record is kept in the ledger and applied.
func (in *Ingest) store(ctx context.Context, site store.HubSite, b Batch) (Answer, error) {
	now := in.now()
	ans := Answer{Protocol: Protocol}
	var skew time.Duration
	if !b.SentAt.IsZero() {
		skew = now.Sub(b.SentAt)
	}
	a := &applier{db: in.db, site: site}
	err := in.db.Batch(ctx, func(ctx context.Context) error {
		s, err := in.db.LockHubSite(ctx, site.ID, now)
		if err != nil {
			return err
		}
		if s.Revoked {
			return refuse(http.StatusUnauthorized, Answer{Detail: fmt.Sprintf("The token of site %q was revoked.", s.Name)})
		}
		if err := in.checkInstance(ctx, s, b); err != nil {
			return err
		}
		next := s.NextSeq
		if b.Epoch != s.Epoch {
			if next, err = in.startEpoch(ctx, s, b, now); err != nil {
				return err
			}
		}
		a.site = s
		a.site.Epoch = b.Epoch
		a.skew = correction(s.Correction, skew, !b.SentAt.IsZero())
		if len(b.Records) > 0 && b.Records[0].Seq > next {
			return refuse(http.StatusConflict, Answer{Code: CodeGap, Expected: next, Acknowledged: next - 1,
				Detail: fmt.Sprintf("Records are missing: the hub expects %d, the batch starts at %d.", next, b.Records[0].Seq)})
		}
		for recs := b.Records; len(recs) > 0; {
			if run := logRun(recs); recs[0].Seq >= next && run > 1 {
				next, err = in.logs(ctx, a, b.Epoch, recs[:run], now, &ans)
				recs = recs[run:]
			} else {
				next, err = in.record(ctx, a, b.Epoch, recs[0], next, a.skew, now, &ans)
				recs = recs[1:]
			}
			if err != nil {
				return err
			}
		}
		ans.Expected, ans.Acknowledged = next, next-1
		p := store.HubPushed{NextSeq: next, Applied: ans.Applied, Duplicates: ans.Duplicates, Records: len(b.Records) > 0,
			Version: orDefault(b.Version, "unknown"), Protocol: b.Protocol, SkewMS: skew.Milliseconds(),
			CorrectionMS: a.skew.Milliseconds(), Backlog: b.Backlog, At: now}
		if b.Oldest != nil && !b.SentAt.IsZero() {
			p.BehindMS = max(b.SentAt.Sub(*b.Oldest).Milliseconds(), 0)
		}
		return in.db.FinishHubPush(ctx, s.ID, p)
	})
	return ans, err
}

// correction is what to add to the times of a push's logs, given the site's current
// correction and the skew measured now: none while the site's clock is within
// SkewCorrected; else the current one while the skew stays within a minute of it (a
// push's measure varies with the network, and the logs of consecutive pushes must keep
// their order), else the new skew (the site's clock moved).
func correction(current, skew time.Duration, measured bool) time.Duration {
	switch {
	case !measured:
		return current
	case skew.Abs() <= SkewCorrected:
		return 0
	case current != 0 && (skew-current).Abs() <= time.Minute:
		return current
	}
	return skew
}

// checkInstance binds a site's token to the first database that pushes with it, and
// refuses any other (two edges sharing a token would interleave their records).
func (in *Ingest) checkInstance(ctx context.Context, s store.HubSite, b Batch) error {
	switch {
	case s.Instance == "":
		return in.db.BindHubSite(ctx, s.ID, b.Instance)
	case b.Instance != s.Instance:
		return refuse(http.StatusForbidden, Answer{Code: CodeInstance, Detail: fmt.Sprintf(
			"The token of site %q is in use by another FieldKit (instance %.8s…): each site needs its own token. "+
				"If this FieldKit replaces that one, give the site a new token (fieldkit hub site token).", s.Name, s.Instance)})
	}
	return nil
}

// startEpoch makes a batch's new epoch the site's, with its records expected from the
// epoch's start; an epoch the site pushed in before and left is refused.
func (in *Ingest) startEpoch(ctx context.Context, s store.HubSite, b Batch, now time.Time) (int64, error) {
	seen, err := in.db.HubEpochSeen(ctx, s.ID, b.Epoch)
	if err != nil {
		return 0, err
	}
	if seen {
		return 0, refuse(http.StatusConflict, Answer{Code: CodeSuperseded, Detail: fmt.Sprintf(
			"Site %q pushes in a newer epoch: this database was superseded by a copy of it (a restored backup).", s.Name)})
	}
	return b.EpochStart, in.db.StartHubEpoch(ctx, s.ID, b.Epoch, b.EpochStart, now)
}

// record stores one record unless the hub holds it already, and returns the next
// record expected.
func (in *Ingest) record(ctx context.Context, a *applier, epoch string, rec Record, next int64, skew time.Duration, now time.Time, ans *Answer) (int64, error) {
	row := store.HubRecord{Site: a.site.ID, Epoch: epoch, Seq: rec.Seq, Kind: rec.Kind, Op: rec.Op, EdgeID: rec.ID,
		UID: rec.UID, SkewMS: skew.Milliseconds()}
	if rec.Seq < next {
		return next, in.duplicate(ctx, row, ans)
	}
	added, err := in.db.AddHubRecord(ctx, row, now)
	if err != nil {
		return next, err
	}
	if !added { // another hub process stored it meanwhile
		ans.Duplicates++
		return rec.Seq + 1, nil
	}
	res, err := a.apply(ctx, rec)
	if err != nil {
		return next, fmt.Errorf("hub: apply %s: %w", describe(rec), err)
	}
	row.HubID, row.Problem = res.hubID, res.problem
	if res.known {
		ans.Duplicates++
	} else {
		ans.Applied++
	}
	if res.problem != "" {
		ans.Problems = append(ans.Problems, Problem{Seq: rec.Seq, Problem: res.problem})
		in.logger.Warn("hub: a record was stored but not applied", "site", a.site.Name, "record", describe(rec), "problem", res.problem)
	}
	return rec.Seq + 1, in.db.SetHubRecordResult(ctx, row)
}

// duplicate counts a record the hub holds already, after checking it is the same one:
// another database sending other records under the same epoch (a copy of the file
// taken without fieldkit backup) is refused, and starts an epoch of its own.
func (in *Ingest) duplicate(ctx context.Context, row store.HubRecord, ans *Answer) error {
	held, ok, err := in.db.StoredHubRecord(ctx, row.Site, row.Epoch, row.Seq)
	if err != nil {
		return err
	}
	if ok && (held.Kind != row.Kind || held.EdgeID != row.EdgeID || held.UID != row.UID) {
		return refuse(http.StatusConflict, Answer{Code: CodeDiverged, Detail: fmt.Sprintf(
			"Record %d of this epoch differs from the one the hub holds: this database is not the one that sent it. "+
				"Start a new epoch.", row.Seq)})
	}
	ans.Duplicates++
	return nil
}

// logRun is how many records from the first are logs to store (upserts): a run the hub
// stores at once (logs).
func logRun(recs []Record) int {
	n := 0
	for n < len(recs) && recs[n].Kind == store.KindLog && recs[n].Op == store.OpUpsert {
		n++
	}
	return n
}

// logs stores a run of new log records at once: their bodies read and checked in Go
// (a record with a problem is kept in the ledger alone), their devices and commands
// looked up once each, then a few multi-row statements (store.AddHubLogs) instead of
// some fifteen a log. Should the database refuse any of it (a log's reference to a
// device a hub user deleted, a record another hub process stored meanwhile), the run is
// undone and stored record by record, each in a savepoint of its own, so that one
// record never holds up the others. It returns the next record expected.
func (in *Ingest) logs(ctx context.Context, a *applier, epoch string, recs []Record, now time.Time, ans *Answer) (int64, error) {
	type ref struct {
		kind string
		edge int64
	}
	refs := map[ref]int64{} // 0: the hub has none
	lookup := func(ctx context.Context, kind string, edge int64) (int64, bool, error) {
		id, ok := refs[ref{kind, edge}]
		if !ok {
			var err error
			if id, _, err = a.hubObject(ctx, kind, edge); err != nil {
				return 0, false, err
			}
			refs[ref{kind, edge}] = id
		}
		return id, id != 0, nil
	}
	logs := make([]store.HubLog, len(recs))
	for i, rec := range recs {
		l := store.HubLog{Record: store.HubRecord{Site: a.site.ID, Epoch: epoch, Seq: rec.Seq, Kind: rec.Kind, Op: rec.Op,
			EdgeID: rec.ID, UID: rec.UID, SkewMS: a.skew.Milliseconds()}, Key: a.logKey(rec)}
		var body map[string]any
		if err := json.Unmarshal(rec.Body, &body); err != nil || body == nil {
			l.Record.Problem = "the body is not a JSON object"
		} else {
			var err error
			if l.Values, l.Record.Problem, err = a.logValues(ctx, rec, body, lookup); err != nil {
				return recs[0].Seq, fmt.Errorf("hub: apply %s: %w", describe(rec), err)
			}
		}
		logs[i] = l
	}
	err := in.db.Savepoint(ctx, func(ctx context.Context) error { return in.db.AddHubLogs(ctx, a.site.ID, logs, now) })
	if err != nil {
		in.logger.Info("hub: a run of logs is stored record by record", "site", a.site.Name, "logs", len(recs), "reason", err)
		next := recs[0].Seq
		for _, rec := range recs {
			if next, err = in.record(ctx, a, epoch, rec, next, a.skew, now, ans); err != nil {
				return next, err
			}
		}
		return next, nil
	}
	for i, l := range logs {
		switch {
		case l.Known:
			ans.Duplicates++
		case l.Record.Problem != "":
			ans.Applied++
			ans.Problems = append(ans.Problems, Problem{Seq: l.Record.Seq, Problem: l.Record.Problem})
			in.logger.Warn("hub: a record was stored but not applied", "site", a.site.Name, "record", describe(recs[i]),
				"problem", l.Record.Problem)
		default:
			ans.Applied++
		}
	}
	return recs[len(recs)-1].Seq + 1, nil
}
