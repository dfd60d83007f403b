// Package cursor makes and opens every opaque position a client of
// taskgraph holds: a live event's cursor (projectEvents' after), a sync
// token (Query.sync's since and nextToken) and a list's cursor (a
// connection's after and before). Package live hands out and reads event
// cursors and takes a sync's last token as a subscription's start; the
// sync (graph/syncer) seals and opens its tokens; dynamo makes and reads
// list cursors. Their formats are written here, once:
//
// An event cursor names one event of one project's stream: its stream
// sequence encrypted and authenticated (AES-256-GCM) under the cursor key
// every instance shares, bound to the project id as additional data:
//
//	base64url(0x01 ‖ nonce (12 bytes) ‖ GCM(seq, 8 bytes big-endian) ‖ tag (16 bytes))
//
// 50 characters whatever the sequence. The nonce is synthetic, an HMAC of
// (seq, project) under a key of its own (SIV-like), so one event always
// has the same cursor and the nonce only repeats where the whole cursor
// does. A client learns nothing from a cursor (not the sequence, so not
// how many events other projects had in between) and cannot make one.
//
// A sync token is sealed under a key of its own, bound to the viewer (the
// additional data), with a random nonce:
//
//	base64url(0x02 ‖ nonce (12 bytes) ‖ GCM(flags ‖ stream sequence (8 bytes) ‖ body) ‖ tag (16 bytes))
//
// flags 0x01: the sync it ends was final (no more pages); the stream
// sequence is where a subscription that continues the sync starts. The
// body is where the client stands in each of its projects' change logs
// (docs/sync.md, "Tokens"):
//
//	version (1) ‖ epoch (uvarint length, bytes) ‖ issued (varint, Unix s)
//	‖ profile rev (uvarint) ‖ projects (uvarint count) ‖ per project:
//	ULID (16 bytes) ‖ mode (1) ‖ pos, skip, seen (uvarints)
//
// about 20 bytes a project.
//
// The three keys (the event cursors' encryption and nonce keys, the sync
// tokens' key) are derived from the one cursor key (HKDF-SHA256, a label
// each): Keys. A token or cursor that another key made, that names another
// project or viewer, or that was changed in any bit fails to open and is
// refused exactly like a malformed one (EINVALID, one message per kind).
//
// A list cursor is the sort key of an item of a page, not sealed (it
// names an item the viewer was shown, in a partition the connection
// supplies, so it cannot lead a read into another partition):
//
//	base64url("c1:" ‖ sort key)
//
// Only the canonical encoding opens, and each list checks the sort key's
// shape (OpenList's valid).
package cursor
