package dynamo

import "context"

// ErrNoProfile is the answer to the viewer who has no profile yet.
var ErrNoProfile = Errorf(ENOTFOUND, "your profile does not exist yet; create it with updateProfile")

// A user's profile is read by reference (UserRef, Get).

// ProfileInput creates or updates the viewer's profile.
type ProfileInput struct {
	Name  string
	Email Opt[*string] // left out: unchanged; null: cleared
}

// UpdateProfile creates the viewer's profile on first call and updates it
// afterwards. Returns EINVALID, ECONFLICT.
func (s *Store) UpdateProfile(ctx context.Context, viewer string, in ProfileInput) (*User, error) {
	if err := ValidUserID(viewer); err != nil {
		return nil, err
	}
	n, err := name("name", in.Name)
	if err != nil {
		return nil, err
	}
	var mail *string
	if in.Email.Set {
		if mail, err = email(in.Email.Value); err != nil {
			return nil, err
		}
	}
	return once(ctx, s, func() (*User, error) {
		return retryOnChange(ctx, concurrentChange, func() (*User, error) {
			cur, err := s.getOne(ctx, userKey(viewer))
			if err != nil {
				return nil, err
			}
			u := &User{ID: viewer, Name: n, Email: mail, CreatedAt: s.now()}
			cond, rev := absent(), 0
			if cur != nil {
				old, err := decodeAs[*User](cur)
				if err != nil {
					return nil, err
				}
				u.CreatedAt = old.CreatedAt
				if !in.Email.Set {
					u.Email = old.Email
				}
				rev = revOf(cur)
				cond = revIs(rev)
			}
			return u, s.put(ctx, userToItem(u, rev+1), cond, viewer, "", nil) // a profile is no project's: no event
		})
	}, replaySelf())
}
