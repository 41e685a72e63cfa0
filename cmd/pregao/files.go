package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/flatfiles"
)

// serveFiles gives the API the flat files of cfg's --files-dir.
func (m *Main) serveFiles(cfg ServeConfig) error {
	dir := cfg.FilesDir
	switch dir {
	case "off":
		return nil
	case "":
		d, err := os.UserCacheDir()
		if err != nil {
			m.log.Warn("no flat files: no --files-dir and no user cache folder", "err", err.Error())
			return nil
		}
		dir = filepath.Join(d, "pregao", "files")
	}
	c, err := flatfiles.NewCache(flatfiles.CacheConfig{Dir: dir, MaxBytes: cfg.FilesMaxBytes, Run: loadInBackground, Log: m.log}, m.Registry)
	if err != nil && cfg.FilesDir == "" {
		// The default folder (a service's home is often read-only): the
		// routes answer 404 "serves no files", not 503 at every request.
		m.log.Warn("no flat files: the user cache folder cannot be written (set --files-dir)", "dir", dir, "err", err.Error())
		return nil
	}
	if err != nil {
		return fmt.Errorf("serve: --files-dir: %w", err)
	}
	m.API.SetFiles(fileSource{c})
	return nil
}

// fileSource is a flatfiles.Cache as the API's httpapi.FileSource.
type fileSource struct{ c *flatfiles.Cache }

func (s fileSource) Files(ctx context.Context, ds *engine.Dataset, id string, through engine.Date) (string, []httpapi.FileInfo, error) {
	dir, m, err := s.c.Get(ctx, ds, id, through)
	if errors.Is(err, flatfiles.ErrBuilding) {
		return "", nil, httpapi.ErrFilesBuilding
	}
	if err != nil {
		return "", nil, err
	}
	out := make([]httpapi.FileInfo, len(m.Files))
	for i, e := range m.Files {
		out[i] = httpapi.FileInfo{Dataset: e.Dataset, Name: e.File, Format: e.Format, Rows: e.Rows, Bytes: e.Bytes,
			SHA256: e.SHA256, MinDate: e.MinDate, MaxDate: e.MaxDate, Priced: flatfiles.Priced(e.Dataset)}
	}
	return dir, out, nil
}
