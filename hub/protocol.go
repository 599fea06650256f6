// Package hub moves a FieldKit site's records to a hub and applies them there
// (docs/HUB-PROTOCOL.md). On an edge, a Pusher sends the outbox the store keeps
// (store/hubedge.go) in batches; on a hub, an Ingest takes each batch in one
// transaction, idempotent by (site, epoch, sequence), and applies every record to the
// hub's own tables, one function per kind (apply.go).
package hub

import (
	"encoding/json"
	"time"
)

// Protocol is the version of the protocol this FieldKit speaks. A hub accepts a batch
// of this version or older (missing fields take their defaults) and answers 426 to a
// newer one; an edge keeps its records until a hub that speaks its version answers.
const Protocol = 1

// PushPath is where an edge posts its batches.
const PushPath = "/api/hub/v1/push/"

// JobsPath is where an edge long-polls for the jobs its hub queued for it.
const JobsPath = "/api/hub/v1/jobs/"

// ProtocolHeader carries the protocol version of a request and its answer, so that a
// hub refuses a newer one before reading its body; InstanceHeader the edge's database
// on a poll for jobs (a push says it in its body).
const (
	ProtocolHeader = "FieldKit-Hub-Protocol"
	InstanceHeader = "FieldKit-Hub-Instance"
)

// Jobs is a hub's answer to a poll: the jobs the site is to run, each once.
type Jobs struct {
	Protocol int   `json:"protocol"`
	Jobs     []Job `json:"jobs"`
}

// Job is one execution a hub asks of a site: the site's own command and device, run
// through its own checks with its hub.credential_set. Its answer goes back as a record
// of kind job.
type Job struct {
	ID        int64           `json:"id"`
	CommandID int64           `json:"command_id"`
	DeviceID  int64           `json:"device_id"`
	Variables json.RawMessage `json:"variables,omitempty"`
	Timeout   int             `json:"timeout"`
	// By is the hub user who asked, for the site's log.
	By string `json:"by"`
	// Notes are why it runs, as the hub user wrote them, for the site's log (added in
	// protocol 1 without a new version: an older site reads none).
	Notes string `json:"notes,omitempty"`
}

// JobAnswer is the body of a job record: the HTTP status and body the site's API
// answered the execution with, and its log's uid.
type JobAnswer struct {
	Job    int64           `json:"job"`
	Status int             `json:"status"`
	Answer json.RawMessage `json:"answer"`
	LogUID string          `json:"log_uid,omitempty"`
}

// The limits of a batch: an edge sends at most MaxRecords records and MaxBatchBytes
// of JSON (a record alone larger than that goes alone); a hub refuses with 413 a body
// of more than MaxBodyBytes, compressed or not.
const (
	MaxRecords    = 1000
	MaxBatchBytes = 4 << 20
	MaxBodyBytes  = 64 << 20
)

// Batch is the body of a push: gzip-compressed JSON.
type Batch struct {
	Protocol int `json:"protocol"`
	// Instance identifies the edge's database; Epoch its current epoch, whose records
	// are numbered from EpochStart.
	Instance   string `json:"instance"`
	Epoch      string `json:"epoch"`
	EpochStart int64  `json:"epoch_start"`
	// SentAt is the edge's clock when it sent the batch: the hub measures its skew.
	SentAt time.Time `json:"sent_at"`
	// Version is the edge's FieldKit version.
	Version string `json:"version"`
	// Backlog is how many records the edge had not had acknowledged when it sent this
	// batch (these included), Oldest when the oldest of them was noted (edge clock).
	Backlog int64      `json:"backlog"`
	Oldest  *time.Time `json:"oldest,omitempty"`
	// Records are consecutive: each Seq is the previous one's plus one. None is a
	// heartbeat: the hub learns the edge is alive, its clock and its backlog.
	Records []Record `json:"records"`
}

// Record is one change: an object of a kind upserted (Body is the object as the edge's
// API renders it) or deleted.
type Record struct {
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	Op   string `json:"op"`
	// ID is the object's id at the edge (0 for a snapshot).
	ID int64 `json:"id"`
	// UID identifies a log wherever it is sent from: a log sent again under a new
	// epoch (a restored edge) is recognised by it, and a new log that took a rewound
	// edge's id is not mistaken for the old one.
	UID  string          `json:"uid,omitempty"`
	Body json.RawMessage `json:"body,omitempty"`
	// Cut says the edge cut the log's output to fit what the hub accepts (413).
	Cut bool `json:"cut,omitempty"`
}

// Answer is the hub's answer to a push, whatever its status.
type Answer struct {
	Protocol int `json:"protocol"`
	// Acknowledged is the highest record of the epoch the hub has stored (this batch
	// included); Expected the next it expects.
	Acknowledged int64 `json:"acknowledged"`
	Expected     int64 `json:"expected"`
	// Applied and Duplicates count this batch's records: stored now, and stored before
	// (a batch sent again after its answer was lost).
	Applied    int `json:"applied"`
	Duplicates int `json:"duplicates"`
	// Problems are the records stored but not applied, and why.
	Problems []Problem `json:"problems,omitempty"`
	// Code names a refusal: "gap" (409: resend from Expected), "diverged" (409: another
	// database sent different records under this epoch), "superseded" (409: the site
	// pushes in a newer epoch), "instance" (403: the token belongs to another edge).
	Code   string `json:"code,omitempty"`
	Detail string `json:"detail,omitempty"`
	// MaxBytes is the largest body the hub takes (413).
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// Problem is a record the hub stored without applying it.
type Problem struct {
	Seq     int64  `json:"seq"`
	Problem string `json:"problem"`
}

// The refusal codes of an Answer.
const (
	CodeGap        = "gap"
	CodeDiverged   = "diverged"
	CodeSuperseded = "superseded"
	CodeInstance   = "instance"
)
