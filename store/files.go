package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Every file FieldKit writes for the user (a backup, an export) appears only complete
// under its final name: it is written to a temp file in the same directory, synced,
// then renamed. The temp file is named after the final name and the writing process
// (".copy.db.<pid>-<random>.fieldkit-tmp"), so that a later write into the directory
// can tell a temp file whose writer is gone (killed, or the machine stopped) from one
// still being written, and remove it. Files are created 0600: what they hold (logs,
// a copy of every secret's ciphertext) is for FieldKit's account alone.

// tempSuffix ends every temp file name.
const tempSuffix = ".fieldkit-tmp"

// WriteAtomic creates final through fill, which writes the temp file at the path it is
// given (closed, empty, 0600). On any failure the temp file is removed and final is
// left as it was. Stale temp files of gone writers in the directory are removed first.
//
// A final name that is already something other than a file or a link to one (a device
// such as /dev/null or /dev/stdout, a named pipe) is written in place: renaming the temp
// file over it would replace the device with a plain file.
func WriteAtomic(final string, fill func(tmp string) error) error {
	if fi, err := os.Stat(final); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return fmt.Errorf("store: write %s: is a directory", final)
		}
		return fill(final)
	}
	dir := filepath.Dir(final)
	RemoveStaleTemps(dir)
	f, err := os.CreateTemp(dir, "."+filepath.Base(final)+"."+strconv.Itoa(os.Getpid())+"-*"+tempSuffix)
	if err != nil {
		return fmt.Errorf("store: write %s: %w", final, err)
	}
	tmp := f.Name()
	err = f.Close()
	if err == nil {
		err = fill(tmp)
	}
	if err == nil {
		err = syncFile(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		os.Remove(tmp + "-journal") // SQLite's, when VACUUM INTO fails
		return err
	}
	syncDir(dir)
	return nil
}

// syncFile flushes a file written by someone else (SQLite's VACUUM INTO does not).
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// RemoveStaleTemps removes the temp files of WriteAtomic in dir whose writing process is
// no longer running, with what was written beside them (SQLite's "-journal" of a
// VACUUM INTO). Failures are ignored: a temp file left is untidy, not harmful.
func RemoveStaleTemps(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, ".*"+tempSuffix+"*"))
	for _, name := range names {
		base, _, _ := strings.Cut(filepath.Base(name), tempSuffix)
		owner := base[strings.LastIndex(base, ".")+1:]
		pid, err := strconv.Atoi(owner[:max(0, strings.Index(owner, "-"))])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.Remove(name)
	}
}

// syncDir makes a rename durable; directories cannot be synced on every OS, and the
// file itself is already safe, so a failure is not an error.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// makePrivate creates path empty with mode 0600 if it does not exist, reporting true,
// and takes away group and other permissions from it (an older version made it 0644)
// if it does.
func makePrivate(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return true, f.Close()
	}
	if !errors.Is(err, os.ErrExist) {
		return false, err
	}
	return false, tighten(path)
}

// tighten drops group and other permissions from an existing file.
func tighten(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return os.Chmod(path, perm&^0o077)
	}
	return nil
}
