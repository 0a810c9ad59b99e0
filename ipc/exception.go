package ipc

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/errors"
)

// Java class names of the exceptions clients key on (gohbase and the Java
// client classify errors by these strings).
const (
	ClassIOException                  = "java.io.IOException"
	ClassDoNotRetryIOException        = "org.apache.hadoop.hbase.DoNotRetryIOException"
	ClassNotServingRegionException    = "org.apache.hadoop.hbase.NotServingRegionException"
	ClassUnknownScannerException      = "org.apache.hadoop.hbase.UnknownScannerException"
	ClassTableNotFoundException       = "org.apache.hadoop.hbase.TableNotFoundException"
	ClassTableExistsException         = "org.apache.hadoop.hbase.TableExistsException"
	ClassTableNotEnabledException     = "org.apache.hadoop.hbase.TableNotEnabledException"
	ClassTableNotDisabledException    = "org.apache.hadoop.hbase.TableNotDisabledException"
	ClassNamespaceNotFoundException   = "org.apache.hadoop.hbase.NamespaceNotFoundException"
	ClassNamespaceExistException      = "org.apache.hadoop.hbase.NamespaceExistException"
	ClassInvalidFamilyOperation       = "org.apache.hadoop.hbase.InvalidFamilyOperationException"
	ClassConstraintException          = "org.apache.hadoop.hbase.constraint.ConstraintException"
	ClassUnknownRegionException       = "org.apache.hadoop.hbase.UnknownRegionException"
	ClassNoSuchColumnFamilyException  = "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
	ClassRegionTooBusyException       = "org.apache.hadoop.hbase.RegionTooBusyException"
	ClassFailedSanityCheckException   = "org.apache.hadoop.hbase.exceptions.FailedSanityCheckException"
	ClassUnknownProtocolException     = "org.apache.hadoop.hbase.exceptions.UnknownProtocolException"
	ClassOutOfOrderScannerNext        = "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException"
	ClassRequestTooBigException       = "org.apache.hadoop.hbase.exceptions.RequestTooBigException"
	ClassFatalConnectionException     = "org.apache.hadoop.hbase.ipc.FatalConnectionException"
	ClassServerNotRunningYetException = "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException"
	ClassRegionServerStoppedException = "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException"
	ClassUnsupportedOperation         = "java.lang.UnsupportedOperationException"
	ClassCallQueueTooBigException     = "org.apache.hadoop.hbase.CallQueueTooBigException"

	// Snapshots (org.apache.hadoop.hbase.snapshot); all are
	// DoNotRetryIOExceptions in HBase.
	ClassHBaseSnapshotException        = "org.apache.hadoop.hbase.snapshot.HBaseSnapshotException"
	ClassSnapshotCreationException     = "org.apache.hadoop.hbase.snapshot.SnapshotCreationException"
	ClassSnapshotExistsException       = "org.apache.hadoop.hbase.snapshot.SnapshotExistsException"
	ClassSnapshotDoesNotExistException = "org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException"
	ClassUnknownSnapshotException      = "org.apache.hadoop.hbase.snapshot.UnknownSnapshotException"
	ClassRestoreSnapshotException      = "org.apache.hadoop.hbase.snapshot.RestoreSnapshotException"
	ClassSnapshotTTLExpiredException   = "org.apache.hadoop.hbase.snapshot.SnapshotTTLExpiredException"
	ClassCorruptedSnapshotException    = "org.apache.hadoop.hbase.snapshot.CorruptedSnapshotException"
)

// doNotRetry lists the classes that are subclasses of DoNotRetryIOException
// in HBase, so the response's do_not_retry flag is set as HBase sets it.
var doNotRetry = map[string]bool{
	ClassDoNotRetryIOException:       true,
	ClassUnknownScannerException:     true,
	ClassTableNotFoundException:      true,
	ClassTableExistsException:        true,
	ClassTableNotEnabledException:    true,
	ClassTableNotDisabledException:   true,
	ClassNamespaceNotFoundException:  true,
	ClassNamespaceExistException:     true,
	ClassInvalidFamilyOperation:      true,
	ClassConstraintException:         true,
	ClassUnknownRegionException:      true,
	ClassNoSuchColumnFamilyException: true,
	ClassFailedSanityCheckException:  true,
	ClassUnknownProtocolException:    true,
	ClassOutOfOrderScannerNext:       true,
	ClassRequestTooBigException:      true,
	ClassFatalConnectionException:    true,
	ClassUnsupportedOperation:        true,

	ClassHBaseSnapshotException:        true,
	ClassSnapshotCreationException:     true,
	ClassSnapshotExistsException:       true,
	ClassSnapshotDoesNotExistException: true,
	ClassUnknownSnapshotException:      true,
	ClassRestoreSnapshotException:      true,
	ClassSnapshotTTLExpiredException:   true,
	ClassCorruptedSnapshotException:    true,
}

// Exception is an error that travels to the client as an HBase exception:
// its Java class name and a message (sent as the stack trace, which is
// what HBase clients print).
type Exception struct {
	Class   string
	Message string
}

// Error implements error.
func (e *Exception) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Class + ": " + e.Message
}

// DoNotRetry reports whether HBase marks this class as not worth retrying.
func (e *Exception) DoNotRetry() bool { return doNotRetry[e.Class] }

// Errorf returns an *Exception of the given class.
func Errorf(class, format string, args ...any) error {
	return &Exception{Class: class, Message: fmt.Sprintf(format, args...)}
}

// AsException returns the Exception in err's chain, if any.
func AsException(err error) (*Exception, bool) {
	var e *Exception
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// ToException maps any error to the Exception sent to the client: an
// *Exception anywhere in err's chain keeps its class (with err's full
// message), anything else is a java.io.IOException, which clients retry.
func ToException(err error) *Exception {
	if e, ok := AsException(err); ok {
		// Keep the context that wrapped e, without repeating its class.
		return &Exception{Class: e.Class, Message: strings.Replace(err.Error(), e.Class+": ", "", 1)}
	}
	return &Exception{Class: ClassIOException, Message: err.Error()}
}
