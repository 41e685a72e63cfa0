package cvm

import (
	"sort"

	"github.com/pregao/pregao/engine"
)

// StatusOn returns the registry status in force on day d and the day it
// began (NoDate when the registry does not say). The registry keeps only
// each row's current situation and when it began (DT_INI_SIT; DT_CANCEL
// for a cancelled company), so a status that began after d is taken
// back:
//
//   - registered after d (DT_REG): not yet a registrant on d, "";
//   - CANCELLED or SUSPENDED since a day after d: ACTIVE on d (registered
//     and not yet cancelled or suspended), since an unknown day;
//   - ACTIVE since a day after d (registered earlier: re-activated after a
//     suspension): unknown on d, "".
//
// Otherwise it is the row's own status and date. A row without dates is
// taken as it stands.
func (r *CadRow) StatusOn(d engine.Date) (status string, since engine.Date) {
	if r.RegistryDate.Valid() && d.Valid() && r.RegistryDate > d {
		return "", engine.NoDate
	}
	st, from := r.Company.Status, r.Company.StatusDate
	if from.Valid() && d.Valid() && from > d {
		if st == "CANCELLED" || st == "SUSPENDED" {
			return "ACTIVE", engine.NoDate
		}
		return "", engine.NoDate
	}
	return st, from
}

// CategoryOn returns the registration category in force on day d
// (CATEG_REG: "Categoria A" may have shares traded on an exchange,
// "Categoria B" may not), or "" when the registry does not say: no
// category, or one that began after d (DT_INI_CATEG).
func (r *CadRow) CategoryOn(d engine.Date) string {
	if r.CategorySince.Valid() && d.Valid() && r.CategorySince > d {
		return ""
	}
	return r.Category
}

// CompaniesOn reduces registry rows to one Company per ID, as the registry
// stood on day d: each row's status is the one in force on d (StatusOn),
// and the row kept is the best by that status (ACTIVE, then SUSPENDED,
// then CANCELLED, then not yet registered), then as Companies orders them.
// takenBack counts the companies whose status or status date differs from
// the registry's current one (a status that began after d). It lists the
// SETOR_ATIV values without a sub-industry as Companies does. d NoDate:
// Companies.
func CompaniesOn(rows []CadRow, d engine.Date) (comps []engine.Company, unmapped []string, takenBack int) {
	if !d.Valid() {
		comps, unmapped = Companies(rows)
		return comps, unmapped, 0
	}
	on := make([]CadRow, len(rows))
	for i := range rows {
		on[i] = rows[i]
		st, since := rows[i].StatusOn(d)
		on[i].Company.Status, on[i].Company.StatusDate = st, since
	}
	best := make(map[string]int, len(on))
	for i := range on {
		id := on[i].Company.ID
		j, ok := best[id]
		if !ok || betterOn(&on[i], &on[j]) {
			best[id] = i
		}
	}
	now, _ := Companies(rows)
	cur := make(map[string]*engine.Company, len(now))
	for i := range now {
		cur[now[i].ID] = &now[i]
	}
	comps = make([]engine.Company, 0, len(best))
	seen := map[string]bool{}
	for _, i := range best {
		c := on[i].Company
		if n := cur[c.ID]; c.Status != n.Status || c.StatusDate != n.StatusDate {
			takenBack++
		}
		comps = append(comps, c)
		if n := on[i].SectorName; n != "" && c.SubIndustryID == "" && !seen[n] {
			seen[n] = true
			unmapped = append(unmapped, n)
		}
	}
	sort.Slice(comps, func(a, b int) bool { return comps[a].ID < comps[b].ID })
	sort.Strings(unmapped)
	return comps, unmapped, takenBack
}

// betterOn is better with a row not yet registered (status "") ranked
// below a cancelled one: on that day the company was what its older
// registration says.
func betterOn(a, b *CadRow) bool {
	ra, rb := statusRank(a.Company.Status), statusRank(b.Company.Status)
	if a.Company.Status == "" {
		ra = 0
	}
	if b.Company.Status == "" {
		rb = 0
	}
	if ra != rb {
		return ra > rb
	}
	return better(a, b)
}
