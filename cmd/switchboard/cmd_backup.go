package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"switchboard/engine"
	"switchboard/engine/runtime"
)

// `switchboard backup FILE`: a consistent copy of the SQLite database, taken beside a running
// serve (docs/operations.md, "Backups").

func (a *app) backupCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the SQLite database to the new FILE (0600), consistently, while serve runs",
		Long: "Copies the database with SQLite's online backup: one snapshot of every committed\n" +
			"transaction, taken without stopping serve. FILE must not exist and its folder must.\n" +
			"A PostgreSQL database is refused: back it up with pg_dump or pg_basebackup.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.config == "" {
				return usageError(errors.New("give the runtime file with --config or SWITCHBOARD_CONFIG"))
			}
			rt, err := runtime.Load(a.config, a.getenv)
			if err != nil {
				return err
			}
			if rt.Database.Driver == "postgres" {
				return refused("backup.unsupported-driver", "database.driver",
					"backup copies an SQLite database; back PostgreSQL up with pg_dump or pg_basebackup (docs/operations.md, \"Backups\")")
			}
			target := args[0]
			if err := checkBackupTarget(target, rt.Database.Path); err != nil {
				return err
			}
			st, _, err := openStore(cmd.Context(), rt, nil, engine.SystemClock{}, newLogger(a.stderr, a.getenv), false, nil)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := st.Backup(cmd.Context(), target)
			if errors.Is(err, fs.ErrExist) {
				return refused("backup.target-exists", target, "the file exists; a backup never overwrites a file")
			}
			if err != nil {
				return environment("backup.failed", target, err)
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "database": rt.Database.Path, "file": target,
					"bytes": rep.Bytes, "pages": rep.Pages})
			}
			fmt.Fprintf(a.stdout, "backed up %s to %s: %d bytes (%d pages)\n", rt.Database.Path, target, rep.Bytes, rep.Pages)
			return nil
		},
	}
}

// checkBackupTarget refuses a target that is the database or one of its files, that exists, or
// whose folder is missing.
func checkBackupTarget(target, database string) error {
	abs, err := filepath.Abs(target)
	if err != nil {
		return environment("backup.failed", target, err)
	}
	if db, err := filepath.Abs(database); err == nil {
		for _, own := range []string{"", "-wal", "-shm", "-journal", ".lock"} {
			if abs == db+own {
				return refused("backup.target-is-database", target, "this is the database or one of its files; give a new file")
			}
		}
	}
	if info, err := os.Lstat(target); err == nil {
		if dbInfo, err := os.Stat(database); err == nil && os.SameFile(info, dbInfo) {
			return refused("backup.target-is-database", target, "this is the database under another name; give a new file")
		}
		return refused("backup.target-exists", target, "the file exists; a backup never overwrites a file")
	}
	dir := filepath.Dir(target)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refused("backup.target-folder-missing", dir, "the backup's folder does not exist; create it first (0700)")
	case err != nil:
		return environment("backup.failed", dir, err)
	case !info.IsDir():
		return refused("backup.target-folder-missing", dir, "this is not a folder")
	}
	return nil
}
