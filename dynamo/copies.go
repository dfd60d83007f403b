package dynamo

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// Denormalised copies. A user's profile item carries the projects they are
// a member of, as a map from project ULID to name (attribute projects; a
// name longer than copyNameBytes is copied as ""), so
// that whether a viewer may see a project (policy.SeesProject) is one read
// of one small item: an eventually consistent GetItem or batch key, 0.5
// RCU, where the project and the membership were two strongly consistent
// keys (2 RCU, each rounded up to 4 KB).
//
// The copy is written in the transaction of every change it follows:
// adding a member sets it, removing a member and deleting the project
// remove it, renaming the project sets it on every member's profile. Each
// is an UpdateItem of one path of the map (SET projects.#p = :name,
// REMOVE projects.#p), so that changes of different projects never
// overwrite each other, nor updateProfile (which sets its own attributes
// only). Renames and deletions write one copy per member, so a project has
// at most MaxMembers members: the transaction stays within DynamoDB's 100
// actions.
//
// Cost (write units): 2 WCU per copy (a transactional write of a profile
// under 1 KB): addProjectMember's copy replaces the check of the user's
// profile (the same 2), removeProjectMember +2, a rename 1 → 2 + 2 per
// member, a deletion +2 per member. At 20 reads per write, each screen
// that checks visibility saves 1.5 RCU or more (docs/performance.md).

// attrProjects is a profile's map of its projects. It always holds the
// entry keepCopy as well, which no project's ULID can equal: a map is never
// empty (as the tag indexes' keepEntry: the embedded store and the
// benchmark's simulator fail a Query over a partition with an empty map).
const (
	attrProjects = "projects"
	keepCopy     = "_"
)

// MaxMembers is how many members a project may have, its owner included:
// a rename or a deletion writes each member's copy in its transaction
// (at most 100 actions, 3 of which are the project's, the cleanup job's
// and the event's).
const MaxMembers = 90

var errTooManyMembers = domain.Errorf(domain.EINVALID, "userId: a project has at most %d members", MaxMembers)

// DefaultMembershipCap is Store.MembershipCap's default: how many projects
// one user may be a member of. Each is a copy on their profile (the
// project's ULID and a name of at most copyNameBytes: 26 + 64 + 1 bytes),
// so a full profile stays under 50 KB (docs/security.md, "Stored items"),
// and the rename of a project can never make a member's profile too large.
const DefaultMembershipCap = 500

// copyNameBytes is the longest name a copy holds, in bytes of UTF-8 (16
// to 64 characters): a longer one is copied as "", and a reader that needs
// it reads the project (policy.ProjectSeen). Names that long are rare;
// every screen reads its viewer's profile.
const copyNameBytes = 64

// copyOf is what a copy holds of a project's name.
func copyOf(name string) string {
	if len(name) > copyNameBytes {
		return ""
	}
	return name
}

func (s *Store) membershipCap() int {
	if s.MembershipCap > 0 {
		return s.MembershipCap
	}
	return DefaultMembershipCap
}

// copyTo adds to t the setting of user u's copy of project p (id) with its
// name, on the condition that the profile exists (onFail otherwise): a
// rename, of a membership that has its copy already.
func (s *Store) copyTo(t *txn, u, projectID, name string, onFail error) {
	upd := expression.Set(expression.Name(attrProjects+"."+ulidOf(projectID)), expression.Value(copyOf(name)))
	t.update(s.table, userKey(u), upd, ptr(exists()), onFail)
}

// joinTo adds to t the copy of a project user u joins (createProject,
// addProjectMember), on the condition that the profile exists and holds
// fewer than the cap's copies: its map holds them and the placeholder
// keepCopy, so size(projects) <= cap. The cap is kept by the transaction
// that adds the membership, whatever runs beside it. A failed condition
// returns the profile (ALL_OLD), which tells miss's two errors apart: none
// without a profile, full with one (commit, profileMiss.of).
func (s *Store) joinTo(t *txn, u, projectID, name string, miss *profileMiss) {
	upd := expression.Set(expression.Name(attrProjects+"."+ulidOf(projectID)), expression.Value(copyOf(name)))
	cond := exists().And(expression.Size(expression.Name(attrProjects)).LessThanEqual(expression.Value(s.membershipCap())))
	t.updateOld(s.table, userKey(u), upd, &cond, miss)
}

// profileMiss is the failed condition of joinTo: no profile (none), or one
// with as many copies as the cap admits (full).
type profileMiss struct{ none, full error }

func (m *profileMiss) Error() string { return "a profile could not take a membership" }

// of is the error of the failure, by the profile the condition failed on
// (nil: there is none).
func (m *profileMiss) of(profile map[string]types.AttributeValue) error {
	if profile == nil {
		return m.none
	}
	return m.full
}

// errOwnCap is createProject's answer to a viewer whose profile holds as
// many projects as the cap admits.
func (s *Store) errOwnCap() error {
	return domain.Errorf(domain.EINVALID, "you are a member of %d projects, the most one user may be in: leave one (leaveProject) or delete one you own first", s.membershipCap())
}

// errUserCap is addProjectMember's answer when the user's profile holds as
// many projects as the cap admits.
func (s *Store) errUserCap(u string) error {
	return domain.Errorf(domain.EINVALID, "userId: %s is a member of %d projects, the most one user may be in", domain.Clip(u), s.membershipCap())
}

// dropCopy adds to t the removal of user u's copy of project p (id); a
// profile gone (none is ever deleted) fails the transaction (errRetry).
func (s *Store) dropCopy(t *txn, u, projectID string) {
	upd := expression.Remove(expression.Name(attrProjects + "." + ulidOf(projectID)))
	t.update(s.table, userKey(u), upd, ptr(exists()), errRetry)
}

const typeCopiesMarker = "COPIES"

func copiesMarker() item {
	it := copiesKey.av()
	it["type"] = &types.AttributeValueMemberS{Value: typeCopiesMarker}
	return it
}

// profileCopies sets, in place, every profile's copies among items, a whole
// table (a dump), from its memberships of existing projects.
func profileCopies(items []item) {
	names := map[string]string{} // project ULID → name
	for _, it := range items {
		if str(it, "type") == typeProject {
			names[ulidOf(str(it, "id"))] = copyOf(str(it, "name"))
		}
	}
	of := map[string]map[string]types.AttributeValue{} // user → copies
	for _, it := range items {
		if str(it, "type") != typeMember {
			continue
		}
		pu, u := ulidOf(str(it, "projectId")), str(it, "userId")
		if name, ok := names[pu]; ok {
			if of[u] == nil {
				of[u] = map[string]types.AttributeValue{}
			}
			of[u][pu] = &types.AttributeValueMemberS{Value: name}
		}
	}
	for _, it := range items {
		if str(it, "type") == typeUser {
			m := of[str(it, "id")]
			if m == nil {
				m = map[string]types.AttributeValue{}
			}
			m[keepCopy] = &types.AttributeValueMemberS{Value: ""}
			it[attrProjects] = &types.AttributeValueMemberM{Value: m}
		}
	}
}

// EnsureCopies gives an existing table's profiles their copies once: when
// the table has no marker (written by a version without them), it reads
// the projects and memberships (one Scan, filtered: a migration, run once),
// sets each profile's map whole, then writes the marker. A new table gets
// the marker at creation. Run it before serving: until it ends, profiles
// list no project. Returns EUNAVAILABLE.
func (s *Store) EnsureCopies(ctx context.Context) error {
	it, err := s.getOne(ctx, copiesKey)
	if err != nil || it != nil {
		return err
	}
	sc, ok := s.db.(scanner)
	if !ok {
		return domain.Errorf(domain.EINTERNAL, "this table's profiles have no copies of their projects, and its client cannot scan to give them")
	}
	items, err := scanTypes(ctx, sc, s.table, typeUser, typeProject, typeMember)
	if err != nil {
		return err
	}
	profileCopies(items)
	n, err := s.setEach(ctx, items, func(it item) bool { return str(it, "type") == typeUser }, attrProjects)
	if err != nil {
		return err
	}
	if err := s.markCopies(ctx); err != nil {
		return err
	}
	s.Log.Info("profiles given the copies of their projects (once)", "profiles", strconv.Itoa(n))
	return nil
}

// markCopies writes the marker of a table whose profiles carry their
// copies (a new table, or once EnsureCopies has given them).
func (s *Store) markCopies(ctx context.Context) error {
	return s.batchWrite(ctx, []types.WriteRequest{{PutRequest: &types.PutRequest{Item: copiesMarker()}}})
}
