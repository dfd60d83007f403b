package dynamo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// A dump is a table's items as text: one line per item in DynamoDB's JSON
// ({"Item":{"PK":{"S":"…"},…}}, the line format of DynamoDB's own exports),
// then a last line {"Count":N,"Version":2,"Checksum":"…"} with the number
// of items, so that a dump cut short is refused rather than half loaded,
// and a checksum of them, so that a damaged one is refused too. The
// embedded store's data file is a dump too.
//
// The checksum (dumpVersion 2) is the sum, modulo 2^32, of the CRC-32C
// (Castagnoli) of every item line (its bytes without the line's end), in
// 8 hex digits: it does not depend on the order of the lines, and any
// change to a line changes it. A dump without "Version" (written by an
// older version, or edited by hand and the two fields taken out) has no
// checksum and loads as it is; the last line may hold no other field.
//
// dumpVersion is the version of the dumps Export writes.
const dumpVersion = 2

// snapshotVersion is the version of the embedded store's snapshots
// (DataFile.Save): a dump of version 2 whose items are one point in time of
// the table as this program keeps it (taken from a consistent view while
// writes were held), its counters, tag indexes and change log in step with
// its items, so that a start loads it as it is (DataFile.Load) instead of
// counting and building them afresh. Its item lines are the store's own
// JSON of each item. ReadDump (an import) reads it as a dump of version 2.
// Its checksum is the sum of version 2 plus snapshotSalt, so that a version
// changed from one to the other does not match it.
const snapshotVersion = 3

// snapshotSalt is added to the checksum of a snapshot (snapshotVersion).
var snapshotSalt = crc32.Checksum([]byte("taskgraph snapshot"), castagnoli)

// checksumOf is the checksum a dump of version has for its items' sum.
func checksumOf(version int, sum uint32) string {
	if version == snapshotVersion {
		sum += snapshotSalt
	}
	return fmt.Sprintf("%08x", sum)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Item is one table item as the SDK holds it.
type Item = map[string]types.AttributeValue

type scanner interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Export writes every item of the table to w as a dump (see ReadDump) and
// returns how many it wrote. It scans the table page by page; items written
// meanwhile may or may not be in it. Returns EUNAVAILABLE, EINTERNAL.
func (s *Store) Export(ctx context.Context, w io.Writer) (int, error) {
	sc, ok := s.db.(scanner)
	if !ok {
		return 0, domain.Errorf(domain.EINTERNAL, "this client cannot scan a table")
	}
	bw := bufio.NewWriter(w)
	n := 0
	var sum uint32
	in := &dynamodb.ScanInput{TableName: &s.table}
	for {
		out, err := sc.Scan(ctx, in)
		if err != nil {
			return n, wrap(err, "scanning the table")
		}
		for _, it := range out.Items {
			line, err := json.Marshal(struct {
				Item map[string]any `json:"Item"`
			}{encodeItem(it)})
			if err != nil {
				return n, domain.Errorf(domain.EINTERNAL, "encoding an item: %v", err)
			}
			sum += crc32.Checksum(line, castagnoli)
			_, _ = bw.Write(append(line, '\n'))
			n++
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	fmt.Fprintf(bw, "{\"Count\":%d,\"Version\":%d,\"Checksum\":\"%08x\"}\n", n, dumpVersion, sum)
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("writing the dump: %w", err)
	}
	return n, nil
}

// ReadDump reads a whole dump written by Export. Every line must be an item
// in DynamoDB's JSON, and the last one {"Count":N,…} with N the number of
// items before it and, from version 2, their checksum; the error names the
// first line that is not, or says that the checksum does not match.
func ReadDump(r io.Reader) ([]Item, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var items []Item
	count := -1
	var sum uint32
	for line := 1; sc.Scan(); line++ {
		if count >= 0 {
			return nil, fmt.Errorf("line %d: data after the last line {\"Count\":…}", line)
		}
		var l struct {
			Item     map[string]dumpValue `json:"Item"`
			Count    *int                 `json:"Count"`
			Version  *int                 `json:"Version"`
			Checksum *string              `json:"Checksum"`
		}
		var it Item
		err := json.Unmarshal(sc.Bytes(), &l)
		if err == nil && l.Item != nil {
			it, err = decodeItem(l.Item)
		}
		if err != nil { // decoded again attribute by attribute, to say what is wrong
			var raw struct {
				Item  map[string]json.RawMessage `json:"Item"`
				Count *int                       `json:"Count"`
			}
			if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
				return nil, fmt.Errorf("line %d: not a JSON object: %v", line, err)
			}
			if raw.Item != nil {
				if _, err := decodeRaw(raw.Item); err != nil {
					return nil, fmt.Errorf("line %d: %v", line, err)
				}
			}
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		switch {
		case l.Count != nil && l.Item == nil:
			if err := checkCountLine(sc.Bytes(), l.Version, l.Checksum, sum); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if *l.Count != len(items) {
				return nil, fmt.Errorf("line %d: says %d items, found %d", line, *l.Count, len(items))
			}
			count = *l.Count
		case l.Item != nil && l.Count == nil && l.Version == nil && l.Checksum == nil:
			sum += crc32.Checksum(sc.Bytes(), castagnoli)
			if it[attrPK] == nil || it[attrSK] == nil {
				return nil, fmt.Errorf("line %d: the item has no %s and %s", line, attrPK, attrSK)
			}
			items = append(items, it)
		default:
			return nil, fmt.Errorf("line %d: neither {\"Item\":…} nor {\"Count\":…}", line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if count < 0 {
		return nil, errors.New("the last line {\"Count\":…} is missing: the dump was cut short")
	}
	return items, nil
}

// checkCountLine checks the fields of a dump's last line (line) beside
// its count: none but Version and Checksum, and with a Version, that it is
// dumpVersion and that Checksum is sum, the checksum of the items before.
func checkCountLine(line []byte, version *int, checksum *string, sum uint32) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	for name := range fields {
		if name != "Count" && name != "Version" && name != "Checksum" {
			return fmt.Errorf("an unknown field %q beside the count", name)
		}
	}
	switch {
	case version == nil && checksum == nil:
		return nil // version 1: no checksum
	case version == nil:
		return errors.New("a checksum without a version")
	case *version != dumpVersion && *version != snapshotVersion:
		return fmt.Errorf("a dump of version %s: this one reads versions 1 (no \"Version\"), %d and %d", fields["Version"], dumpVersion, snapshotVersion)
	case checksum == nil:
		return errors.New("the checksum is missing")
	case *checksum != checksumOf(*version, sum):
		return fmt.Errorf("the items do not match the checksum %q (theirs is %s): a line was changed after the dump was written", *checksum, checksumOf(*version, sum))
	}
	return nil
}

// PutItems writes a whole table's items (a dump: the embedded store's data
// file, the import command) with BatchWriteItem, 25 at a time, over any
// items with the same keys. They are written as they are but for the
// counters of projects and tasks, which are counted afresh from the items
// (recount, in place): a dump of a version without counters, or of a table
// scanned while it changed, loads with exact counts. The tag indexes and
// their marker are built afresh too (tagindex.go), so a dump of a version
// without them loads indexed. Returns EUNAVAILABLE, EINTERNAL.
func (s *Store) PutItems(ctx context.Context, items []Item) error {
	items = s.recount(items)
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	if err := s.batchWrite(ctx, reqs); err != nil {
		return err
	}
	s.tagIndexed.Store(true)
	s.commentIndexed.Store(true)
	s.noteBackfills()
	return nil
}
