package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
)

func TestGetManyRefs(t *testing.T) {
	ts := newTestStore(t)
	bd := makeBigDataset(ts)
	ts.mustImport(t, bd.d)
	if len(bd.existing) != 175 {
		t.Fatalf("dataset has %d objects, want 175", len(bd.existing))
	}
	fresh := freshULIDs(t, 20)
	p0 := bd.d.Projects[0]
	t0 := bd.d.Tasks[0]

	// 25 well-formed refs to nothing.
	var missing []Ref
	for i := range 5 {
		missing = append(missing, UserRef(fmt.Sprintf("ghost-%d", i)), ProjectRef(domain.ProjectIDOf(fresh[i])),
			TaskRef(domain.TaskIDOf(fresh[5+i])), CommentRef(domain.CommentIDOf(ulidOf(t0.ID), fresh[10+i])))
	}
	for i := range 5 {
		// u29 is a member of P4 only; fresh[15..] name no project.
		if i < 4 {
			missing = append(missing, MemberRef(bd.d.Projects[i].ID, "u29"))
		} else {
			missing = append(missing, MemberRef(domain.ProjectIDOf(fresh[15]), "u00"))
		}
	}
	// 10 malformed refs.
	malformed := []Ref{
		UserRef(""), UserRef("has space"), UserRef("a#b"), ProjectRef("prj#nope"), ProjectRef(t0.ID),
		MemberRef(p0.ID, "bad#user"), TaskRef(p0.ID), TaskRef(strings.ToLower(t0.ID)), CommentRef(t0.ID),
		{Kind: domain.KindUnknown, ID: "u00"},
	}
	// 40 duplicates of existing and missing refs.
	rng := rand.New(rand.NewPCG(7, 11))
	var dups []Ref
	pool := append(slices.Clone(bd.existing), missing...)
	for range 40 {
		dups = append(dups, pool[rng.IntN(len(pool))])
	}
	refs := slices.Concat(bd.existing, missing, malformed, dups)
	rng.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	if len(refs) != 250 {
		t.Fatalf("%d refs, want 250", len(refs))
	}
	isMissing := map[Ref]bool{}
	for _, r := range missing {
		isMissing[r] = true
	}
	isMalformed := map[Ref]bool{}
	for _, r := range malformed {
		isMalformed[r] = true
	}
	uniq := map[Ref]bool{}
	for _, r := range refs {
		if !isMalformed[r] {
			uniq[r] = true
		}
	}

	vals, errs := ts.Get(context.Background(), refs)
	if len(vals) != len(refs) || len(errs) != len(refs) {
		t.Fatalf("Get returned %d values and %d errors for %d refs", len(vals), len(errs), len(refs))
	}

	t.Run("results are in input order and equal what was stored", func(t *testing.T) {
		for i, r := range refs {
			if want, ok := bd.want[r]; ok {
				checkGot(t, i, r, vals[i], errs[i], want)
			}
		}
	})
	t.Run("missing objects are ENOTFOUND with no value", func(t *testing.T) {
		for i, r := range refs {
			if isMissing[r] {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], domain.ENOTFOUND)
				if vals[i] != nil {
					t.Errorf("ref %d %+v: value %v for a missing object", i, r, show(vals[i]))
				}
			}
		}
	})
	t.Run("malformed refs are EINVALID with no value", func(t *testing.T) {
		for i, r := range refs {
			if isMalformed[r] {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], domain.EINVALID)
				if vals[i] != nil {
					t.Errorf("ref %d %+v: value %v for a malformed ref", i, r, show(vals[i]))
				}
			}
		}
	})
	t.Run("one BatchGetItem per 100 unique keys and no other call", func(t *testing.T) {
		want := (len(uniq) + maxBatchGet - 1) / maxBatchGet
		if len(uniq) != 200 || want != 2 {
			t.Fatalf("test set-up: %d unique keys", len(uniq))
		}
		if got := ts.calls.Get("BatchGetItem"); got != want {
			t.Errorf("BatchGetItem calls = %d, want %d for %d unique keys (%s)", got, want, len(uniq), ts.calls)
		}
		if got := ts.calls.Get("GetItem"); got != 0 {
			t.Errorf("GetItem calls = %d, want 0", got)
		}
	})
	t.Run("no refs make no call", func(t *testing.T) {
		ts.calls.Reset()
		vals, errs := ts.Get(context.Background(), nil)
		if len(vals) != 0 || len(errs) != 0 || ts.calls.Get("BatchGetItem") != 0 {
			t.Errorf("Get(nil) = %v, %v with %s", vals, errs, ts.calls)
		}
		vals, errs = ts.Get(context.Background(), malformed)
		if ts.calls.Get("BatchGetItem") != 0 {
			t.Errorf("only malformed refs still read: %s", ts.calls)
		}
		for i := range malformed {
			wantCode(t, fmt.Sprintf("malformed %d", i), errs[i], domain.EINVALID)
			if vals[i] != nil {
				t.Errorf("malformed %d: value %v", i, vals[i])
			}
		}
	})
}
