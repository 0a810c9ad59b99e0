package server

import (
	"path/filepath"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/wal"
	"google.golang.org/protobuf/proto"
)

// Namespaces live in hbase:namespace, one row per namespace with the
// PBUF-framed NamespaceDescriptor in info:d, as HBase 2 keeps them; the
// server also holds them in memory (Server.namespaces). default and hbase
// always exist and cannot be deleted (HBase's reserved namespaces).

// loadNamespaces reads hbase:namespace into s.namespaces.
func (s *Server) loadNamespaces() error {
	r, err := s.namespaceRegion()
	if err != nil {
		return err
	}
	sc, err := r.NewScanner(&region.Scan{Columns: []region.Column{{Family: famInfo, Qualifier: colNamespaceDescr}}})
	if err != nil {
		return errors.Wrap(err, "server: scanning hbase:namespace")
	}
	defer sc.Close()
	found := map[string]*hbasepb.NamespaceDescriptor{}
	for {
		res, err := sc.Next()
		if err != nil {
			return errors.Wrap(err, "server: scanning hbase:namespace")
		}
		if res == nil {
			break
		}
		d := &hbasepb.NamespaceDescriptor{}
		if err := hbasepb.ParsePB(res.Value(famInfo, colNamespaceDescr), d); err != nil {
			return errors.Wrapf(err, "server: hbase:namespace row %q", res.Cells[0].Row)
		}
		found[string(d.GetName())] = d
	}
	for _, ns := range []string{defaultNamespace, systemNamespace} {
		if found[ns] == nil {
			found[ns] = &hbasepb.NamespaceDescriptor{Name: []byte(ns)}
		}
	}
	s.mu.Lock()
	s.namespaces = found
	s.mu.Unlock()
	return nil
}

// namespaceExists reports whether namespace ns exists.
func (s *Server) namespaceExists(ns string) bool {
	if ns == defaultNamespace || ns == systemNamespace {
		return true // before hbase:namespace is read, too
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.namespaces[ns] != nil
}

// checkNamespace returns HBase's NamespaceNotFoundException for a namespace
// that does not exist.
func (s *Server) checkNamespace(ns string) error {
	if !s.namespaceExists(ns) {
		return ipc.Errorf(ipc.ClassNamespaceNotFoundException, "%s", ns)
	}
	return nil
}

// namespaceDescriptors returns every namespace, sorted by name.
func (s *Server) namespaceDescriptors() []*hbasepb.NamespaceDescriptor {
	s.mu.RLock()
	out := make([]*hbasepb.NamespaceDescriptor, 0, len(s.namespaces))
	for _, d := range s.namespaces {
		out = append(out, d)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return string(out[i].GetName()) < string(out[j].GetName()) })
	return out
}

// getNamespace returns a namespace's descriptor, as HBase's
// GetNamespaceDescriptor.
func (s *Server) getNamespace(ns string) (*hbasepb.NamespaceDescriptor, error) {
	s.mu.RLock()
	d := s.namespaces[ns]
	s.mu.RUnlock()
	if d == nil {
		return nil, ipc.Errorf(ipc.ClassNamespaceNotFoundException, "%s", ns)
	}
	return d, nil
}

// checkNamespaceDescriptor validates a descriptor from a client and returns
// its name.
func checkNamespaceDescriptor(d *hbasepb.NamespaceDescriptor) (string, error) {
	if d == nil {
		return "", badRequest("missing namespace descriptor")
	}
	ns := string(d.GetName())
	if err := validName(ns, false); err != nil {
		// HBase's TableName.isLegalNamespaceName throws an
		// IllegalArgumentException, which reaches the client as a
		// (retryable) IOException; a bad name never becomes good.
		return "", ipc.Errorf(ipc.ClassDoNotRetryIOException,
			"illegal namespace name %q: %v; namespaces may only contain alphanumeric characters and underscores", ns, err)
	}
	return ns, nil
}

// createNamespace is HBase's CreateNamespaceProcedure.
func (s *Server) createNamespace(d *hbasepb.NamespaceDescriptor) error {
	ns, err := checkNamespaceDescriptor(d)
	if err != nil {
		return err
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if s.namespaceExists(ns) {
		return ipc.Errorf(ipc.ClassNamespaceExistException, "Namespace %s already exists", ns)
	}
	d = proto.Clone(d).(*hbasepb.NamespaceDescriptor)
	if err := s.putNamespace(d); err != nil {
		return err
	}
	s.mu.Lock()
	s.namespaces[ns] = d
	s.mu.Unlock()
	s.log.Info("created namespace", "namespace", ns)
	return nil
}

// modifyNamespace is HBase's ModifyNamespaceProcedure: it replaces the
// namespace's configuration.
func (s *Server) modifyNamespace(d *hbasepb.NamespaceDescriptor) error {
	ns, err := checkNamespaceDescriptor(d)
	if err != nil {
		return err
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if err := s.checkNamespace(ns); err != nil {
		return err
	}
	d = proto.Clone(d).(*hbasepb.NamespaceDescriptor)
	if err := s.putNamespace(d); err != nil {
		return err
	}
	s.mu.Lock()
	s.namespaces[ns] = d
	s.mu.Unlock()
	s.log.Info("modified namespace", "namespace", ns)
	return nil
}

// deleteNamespace is HBase's DeleteNamespaceProcedure: the namespace must
// exist, not be reserved, and hold no table.
func (s *Server) deleteNamespace(ns string) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if err := s.checkNamespace(ns); err != nil {
		return err
	}
	if ns == defaultNamespace || ns == systemNamespace {
		return ipc.Errorf(ipc.ClassConstraintException, "Reserved namespace %s cannot be removed.", ns)
	}
	if ts, _ := s.listTables(nil, true, ns, nil); len(ts) > 0 {
		return ipc.Errorf(ipc.ClassConstraintException,
			"Only empty namespaces can be removed. Namespace %s has %d tables", ns, len(ts))
	}
	r, err := s.namespaceRegion()
	if err != nil {
		return err
	}
	if err := r.Delete(&region.Delete{Row: []byte(ns), Durability: wal.FSyncWAL}); err != nil {
		return errors.Wrap(err, "server: deleting from hbase:namespace")
	}
	s.mu.Lock()
	delete(s.namespaces, ns)
	s.mu.Unlock()
	// The namespace's directory, as HBase's DeleteNamespaceProcedure
	// removes it; tables deleted before left it empty.
	dir := filepath.Join(s.cfg.DataDir, "data", ns)
	if err := vfs.RemoveAll(s.fs, dir); err != nil {
		s.log.Warn("server: removing a deleted namespace's directory", "dir", dir, "err", err)
	}
	s.log.Info("deleted namespace", "namespace", ns)
	return nil
}
