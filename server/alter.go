package server

import (
	"bytes"
	"path/filepath"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"google.golang.org/protobuf/proto"
)

// alterTable changes a table's schema, as HBase's ModifyTableProcedure
// (which AddColumn, ModifyColumn and DeleteColumn also run): edit gets a
// copy of the current schema and returns the new one, or the exception to
// refuse it with.
//
// The new descriptor is written to .tabledesc first: it is the truth, and
// a restart finishes applying it (the regions are opened with its families
// and Options.DropFamilies). Then every open region changes in place, as
// HBase's reopening of the regions does: added families are added and
// modified ones modified before the new descriptor is published to
// requests, deleted ones deleted after, so that a request the table's
// descriptor admits finds its families in the region. A disabled table's
// regions take the new schema when they are enabled.
func (s *Server) alterTable(pb *hbasepb.TableName, edit func(t *table, schema *hbasepb.TableSchema) (*hbasepb.TableSchema, error)) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	t, err := s.userTable(pb, "modify")
	if err != nil {
		return err
	}
	old := t.desc.Load()
	schema, err := edit(t, proto.Clone(old.schema).(*hbasepb.TableSchema))
	if err != nil {
		return err
	}
	schema.TableName = t.name.PB()
	if len(schema.GetColumnFamilies()) == 0 {
		return ipc.Errorf(ipc.ClassDoNotRetryIOException, "Table %s should have at least one column family.", t.name)
	}
	fams, err := tableFamilies(schema)
	if err != nil {
		return err
	}
	b, err := proto.Marshal(schema)
	if err != nil {
		return errors.Wrap(err, "server: encoding table descriptor")
	}
	if err := s.writeFileAtomic(filepath.Join(s.tableDir(t.name), ".tabledesc"), b); err != nil {
		return err
	}

	before := map[string]region.FamilyOptions{}
	for _, f := range old.families {
		before[f.Name] = f
	}
	after := map[string]bool{}
	var first error
	note := func(hr *hostedRegion, err error) {
		if err != nil && first == nil {
			first = errors.Wrapf(err, "server: altering region %s of %s", hr.info.EncodedName(), t.name)
		}
	}
	for _, f := range fams {
		after[f.Name] = true
		prev, had := before[f.Name]
		if had && prev == f {
			continue
		}
		for _, hr := range t.regions {
			r := hr.r.Load()
			if r == nil {
				continue
			}
			if had {
				note(hr, r.ModifyFamily(f))
				continue
			}
			err := r.AddFamily(f)
			if errors.Is(err, region.ErrFamilyExists) {
				// Left by an alter that failed part way: take the options.
				err = r.ModifyFamily(f)
			}
			note(hr, err)
		}
	}
	t.desc.Store(&tableDesc{schema: schema, families: fams})
	for _, f := range old.families {
		if after[f.Name] {
			continue
		}
		for _, hr := range t.regions {
			if r := hr.r.Load(); r != nil {
				if err := r.DeleteFamily(f.Name); err != nil && !errors.Is(err, region.ErrNoSuchFamily) {
					note(hr, err)
				}
			}
		}
	}
	if first != nil {
		// The descriptor stands; the regions that failed take it when
		// they are next opened (HBase retries the procedure until then).
		return first
	}
	s.log.Info("modified table", "table", t.name.String(), "families", len(fams))
	return nil
}

func (s *Server) modifyTable(req *hbasepb.ModifyTableRequest) error {
	return s.alterTable(req.GetTableName(), func(t *table, _ *hbasepb.TableSchema) (*hbasepb.TableSchema, error) {
		if n := req.GetTableSchema().GetTableName(); n != nil {
			name, err := tableNameFromPB(n)
			if err != nil {
				return nil, err
			}
			if name != t.name {
				return nil, ipc.Errorf(ipc.ClassDoNotRetryIOException,
					"the descriptor names table %s, the request %s: a table cannot be renamed", name, t.name)
			}
		}
		if req.GetTableSchema() == nil {
			return nil, badRequest("missing table schema")
		}
		return proto.Clone(req.GetTableSchema()).(*hbasepb.TableSchema), nil
	})
}

// familyIndex returns the index of family name in schema, -1 if none.
func familyIndex(schema *hbasepb.TableSchema, name []byte) int {
	for i, cf := range schema.GetColumnFamilies() {
		if bytes.Equal(cf.GetName(), name) {
			return i
		}
	}
	return -1
}

// addColumn is HMaster.addColumn: the family must be new.
func (s *Server) addColumn(req *hbasepb.AddColumnRequest) error {
	cf := req.GetColumnFamilies()
	if cf == nil {
		return badRequest("missing column family")
	}
	return s.alterTable(req.GetTableName(), func(t *table, schema *hbasepb.TableSchema) (*hbasepb.TableSchema, error) {
		if familyIndex(schema, cf.GetName()) >= 0 {
			return nil, ipc.Errorf(ipc.ClassInvalidFamilyOperation,
				"Column family '%s' in table '%s' already exists so cannot be added", cf.GetName(), t.name)
		}
		schema.ColumnFamilies = append(schema.ColumnFamilies, proto.Clone(cf).(*hbasepb.ColumnFamilySchema))
		return schema, nil
	})
}

// modifyColumn is HMaster.modifyColumn: the family's whole descriptor is
// replaced.
func (s *Server) modifyColumn(req *hbasepb.ModifyColumnRequest) error {
	cf := req.GetColumnFamilies()
	if cf == nil {
		return badRequest("missing column family")
	}
	return s.alterTable(req.GetTableName(), func(t *table, schema *hbasepb.TableSchema) (*hbasepb.TableSchema, error) {
		i := familyIndex(schema, cf.GetName())
		if i < 0 {
			return nil, ipc.Errorf(ipc.ClassInvalidFamilyOperation,
				"Family '%s' does not exist, so it cannot be modified", cf.GetName())
		}
		schema.ColumnFamilies[i] = proto.Clone(cf).(*hbasepb.ColumnFamilySchema)
		return schema, nil
	})
}

// deleteColumn is HMaster.deleteColumn: the family must exist and not be
// the table's only one.
func (s *Server) deleteColumn(req *hbasepb.DeleteColumnRequest) error {
	name := req.GetColumnName()
	return s.alterTable(req.GetTableName(), func(t *table, schema *hbasepb.TableSchema) (*hbasepb.TableSchema, error) {
		i := familyIndex(schema, name)
		if i < 0 {
			return nil, ipc.Errorf(ipc.ClassInvalidFamilyOperation,
				"Family '%s' does not exist, so it cannot be deleted", name)
		}
		if len(schema.ColumnFamilies) == 1 {
			return nil, ipc.Errorf(ipc.ClassInvalidFamilyOperation,
				"Family '%s' is the only column family in the table, so it cannot be deleted", name)
		}
		schema.ColumnFamilies = append(schema.ColumnFamilies[:i], schema.ColumnFamilies[i+1:]...)
		return schema, nil
	})
}

// flushTable flushes every region of an enabled table, as HBase 2.6's
// FlushTableProcedure (and the flush-table-proc procedure before it). A
// region flushes all its families: naming some only checks that they
// exist.
func (s *Server) flushTable(pb *hbasepb.TableName, families [][]byte) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	name, err := tableNameFromPB(pb)
	if err != nil {
		return err
	}
	t := s.tableByName(name)
	if t == nil {
		return ipc.Errorf(ipc.ClassTableNotFoundException, "%s", name)
	}
	if t.getState() != hbasepb.TableState_ENABLED {
		return ipc.Errorf(ipc.ClassTableNotEnabledException, "%s", name)
	}
	for _, f := range families {
		if familyIndex(t.schema(), f) < 0 {
			return ipc.Errorf(ipc.ClassNoSuchColumnFamilyException, "column family %s does not exist in table %s", f, name)
		}
	}
	for _, hr := range t.regions {
		if r := hr.r.Load(); r != nil {
			if err := r.Flush(); err != nil {
				return errors.Wrapf(err, "server: flushing region %s of %s", hr.info.EncodedName(), name)
			}
		}
	}
	return nil
}
