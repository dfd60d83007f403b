package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/taskgraph/taskgraph/domain"
)

// ErrNoProfile is the answer to the viewer who has no profile yet.
var ErrNoProfile = domain.Errorf(domain.ENOTFOUND, "your profile does not exist yet; create it with updateProfile")

// A user's profile is read by reference (UserRef, Get).

// UpdateProfile creates the viewer's profile on first call and updates it
// afterwards. Returns EINVALID, ECONFLICT.
func (s *Store) UpdateProfile(ctx context.Context, viewer string, in domain.ProfileInput) (*domain.User, error) {
	if err := domain.ValidUserID(viewer); err != nil {
		return nil, err
	}
	n, err := domain.CleanName("name", in.Name)
	if err != nil {
		return nil, err
	}
	var mail *string
	if in.Email.Set {
		if mail, err = domain.CleanEmail(in.Email.Value); err != nil {
			return nil, err
		}
	}
	return once(ctx, s, func() (*domain.User, error) {
		return retryOnChange(ctx, concurrentChange, func() (*domain.User, error) {
			cur, err := s.getOne(ctx, userKey(viewer))
			if err != nil {
				return nil, err
			}
			u := &domain.User{ID: viewer, Name: n, Email: mail, CreatedAt: s.now()}
			cond, rev := absent(), 0
			if cur != nil {
				old, err := decodeAs[*domain.User](cur)
				if err != nil {
					return nil, err
				}
				u.CreatedAt, u.Projects = old.CreatedAt, old.Projects
				if !in.Email.Set {
					u.Email = old.Email
				}
				rev = revOf(cur)
				cond = revIs(rev)
			}
			u.Rev = rev + 1
			if cur == nil { // a new profile is in no project yet
				return u, s.put(ctx, userToItem(u, rev+1), cond, viewer, "", nil) // a profile is no project's: no event
			}
			// The job that copies the profile into the change logs of the
			// user's projects, written with it (changes.go, copyProfile).
			// Its own attributes only: the copies of its projects
			// (copies.go) are written by other transactions.
			upd := expression.Set(expression.Name("name"), expression.Value(u.Name)).
				Set(expression.Name("rev"), expression.Value(rev+1))
			if u.Email != nil {
				upd = upd.Set(expression.Name("email"), expression.Value(*u.Email))
			} else {
				upd = upd.Remove(expression.Name("email"))
			}
			t := txn{result: viewer}
			t.update(s.table, userKey(viewer), upd, &cond, errRetry)
			t.put(s.table, profileJob(viewer, rev+1, s.now()), nil, nil)
			if err := s.commit(ctx, &t); err != nil {
				return nil, err
			}
			s.KickCleanup()
			return u, nil
		})
	}, replaySelf())
}
