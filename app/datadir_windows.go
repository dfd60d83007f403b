package app

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockedRange is where tryLock's lock lies: one byte far past the holder's
// description at the start of the file, which Windows' mandatory locks
// would otherwise keep others from reading.
var lockedRange = windows.Overlapped{OffsetHigh: 1}

// tryLock takes an exclusive lock on f (LockFileEx, released by the system
// when the process ends). It returns errLocked when another holds it.
func tryLock(f *os.File) error {
	ol := lockedRange
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLocked
	}
	return err
}

// unlock releases tryLock's lock.
func unlock(f *os.File) error {
	ol := lockedRange
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
