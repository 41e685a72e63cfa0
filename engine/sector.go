package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pregao/pregao/index"
)

// Sectors returns every taxonomy node, sorted by ID.
func (d *Dataset) Sectors() []*Sector { return d.sectors }

// Sector returns the taxonomy node with the given id.
func (d *Dataset) Sector(id string) (*Sector, bool) {
	i, ok := d.sectorByID.Get(id)
	if !ok {
		return nil, false
	}
	return d.sectors[i], true
}

// SectorDescendants returns the id of the node and of every node below it
// (a level-1 sector expands to all its industry groups, industries and
// sub-industries), sorted; false for an unknown id.
func (d *Dataset) SectorDescendants(id string) ([]string, bool) {
	i, ok := d.sectorByID.Get(id)
	if !ok {
		return nil, false
	}
	return d.sectorDesc[i], true
}

// SectorPath returns the four taxonomy levels of a node and its ancestors
// (index level-1); entries below the node's level are nil.
func (d *Dataset) SectorPath(id string) ([4]*Sector, bool) {
	var p [4]*Sector
	i, ok := d.sectorByID.Get(id)
	if !ok {
		return p, false
	}
	for s := d.sectors[i]; s != nil; {
		p[s.Level-1] = s
		if s.ParentID == "" {
			break
		}
		j, _ := d.sectorByID.Get(s.ParentID)
		s = d.sectors[j]
	}
	return p, true
}

func (b *builder) buildSectors() error {
	u, d := b.u, b.d
	d.sectors = make([]*Sector, len(u.Sectors))
	for i := range u.Sectors {
		d.sectors[i] = &u.Sectors[i]
	}
	slices.SortFunc(d.sectors, func(a, b *Sector) int { return strings.Compare(a.ID, b.ID) })
	keys := make([]string, len(d.sectors))
	vals := make([]int32, len(d.sectors))
	for i, s := range d.sectors {
		if s.ID == "" {
			return fmt.Errorf("sector %q: empty id: %w", s.Name, ErrInvalid)
		}
		if s.Level < 1 || s.Level > 4 {
			return fmt.Errorf("sector %q: level %d not in 1..4: %w", s.ID, s.Level, ErrInvalid)
		}
		keys[i], vals[i] = s.ID, int32(i)
	}
	m, err := index.NewMap(keys, vals)
	if err != nil {
		return fmt.Errorf("sectors: %v: %w", err, ErrInvalid)
	}
	d.sectorByID = m
	parent := make([]int32, len(d.sectors))
	for i, s := range d.sectors {
		parent[i] = -1
		if s.Level == 1 {
			if s.ParentID != "" {
				return fmt.Errorf("sector %q: level 1 with parent %q: %w", s.ID, s.ParentID, ErrInvalid)
			}
			continue
		}
		p, ok := m.Get(s.ParentID)
		if !ok {
			return fmt.Errorf("sector %q: unknown parent %q: %w", s.ID, s.ParentID, ErrInvalid)
		}
		if d.sectors[p].Level != s.Level-1 {
			return fmt.Errorf("sector %q (level %d): parent %q is level %d: %w",
				s.ID, s.Level, s.ParentID, d.sectors[p].Level, ErrInvalid)
		}
		parent[i] = p
	}
	d.sectorDesc = make([][]string, len(d.sectors))
	for i, s := range d.sectors {
		for j := int32(i); j >= 0; j = parent[j] {
			d.sectorDesc[j] = append(d.sectorDesc[j], s.ID)
		}
	}
	for i := range d.sectorDesc {
		slices.Sort(d.sectorDesc[i])
	}
	return nil
}
