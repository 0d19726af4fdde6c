// Command atlassum rewrites (or, with -check, verifies) the atlas.sum integrity file of every engine's migration
// directory, exactly as `atlas migrate hash` would. `make migrate-hash` runs it; CI runs it with -check.
//
//	go run ./internal/tools/atlassum            # rewrite sql/migrations/{postgres,mysql,sqlite}/atlas.sum
//	go run ./internal/tools/atlassum -check     # fail when a directory does not match its atlas.sum
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"ariga.io/atlas/sql/migrate"
)

// engines are the migration directories, one per engine, under -root.
var engines = []string{"postgres", "mysql", "sqlite"}

func main() {
	root := flag.String("root", "sql/migrations", "directory holding one migration directory per engine")
	check := flag.Bool("check", false, "verify the atlas.sum files instead of rewriting them")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "atlassum:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	for _, engine := range engines {
		path := filepath.Join(root, engine)
		dir, err := migrate.NewLocalDir(path)
		if err != nil {
			return err
		}
		if check {
			if err := migrate.Validate(dir); err != nil {
				var cerr *migrate.ChecksumError
				if errors.As(err, &cerr) {
					return fmt.Errorf("%s: %s was %s (line %d of atlas.sum); run make migrate-hash after adding a new file, never edit an applied one", path, cerr.File, cerr.Reason, cerr.Line)
				}
				return fmt.Errorf("%s: %w", path, err)
			}
			fmt.Printf("%s/atlas.sum ok\n", path)
			continue
		}
		sum, err := dir.Checksum()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := migrate.WriteSumFile(dir, sum); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Printf("%s/atlas.sum written (%d files)\n", path, len(sum))
	}
	return nil
}
