// Package zkserver runs Apache ZooKeeper as a child process, the way HBase's
// standalone mode runs one inside the master: `regionsrv serve --standalone`
// and integration tests use it to get a ZooKeeper without a separate
// installation step beyond the Debian package.
//
// The server is Debian's ZooKeeper (package zookeeper, which installs
// /usr/share/java/zookeeper.jar and pulls in Java), started with
// org.apache.zookeeper.server.ZooKeeperServerMain on a zoo.cfg written into
// Config.Dir. It listens on 127.0.0.1 only. Start returns once the server
// answers the "srvr" four-letter command with "Mode: standalone", which is
// when sessions work ("ruok" answers earlier), and "conf" shows that the
// server answering is the child and not another one on the same port. The
// child's standard output and error go to zookeeper.log in Config.Dir.
//
// On Linux the child is killed when the parent process dies, even by
// SIGKILL, and it runs in its own process group, so a terminal's Ctrl-C
// reaches only the parent, which can then shut down in order and call
// Stop.
package zkserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
)

// DefaultJar is where Debian's zookeeper package installs ZooKeeper. Its
// manifest names the dependency jars, so it is a complete class path.
const DefaultJar = "/usr/share/java/zookeeper.jar"

// Environment variables consulted for Config defaults.
const (
	// EnvJar overrides DefaultJar.
	EnvJar = "REGIONKV_ZOOKEEPER_JAR"
	// EnvJava names the java binary to run.
	EnvJava = "JAVA"
)

// LogName is the file in Config.Dir that receives the child's output. The
// previous run's log is kept as LogName + ".1".
const LogName = "zookeeper.log"

// DefaultStartTimeout is the default for Config.StartTimeout.
const DefaultStartTimeout = 30 * time.Second

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 5 * time.Second

// InstallHint tells an operator how to get what Start needs.
const InstallHint = `install Debian's ZooKeeper with "apt-get install zookeeper" ` +
	`(Debian package zookeeper; it provides ` + DefaultJar + ` and pulls in Java)`

// ErrNotInstalled is returned (wrapped) by Start when the ZooKeeper jar or
// the java binary cannot be found. The error message says how to install
// them.
var ErrNotInstalled = errors.New("ZooKeeper is not installed")

// ErrPortInUse is returned (wrapped) by Start when the requested port is
// already taken on 127.0.0.1.
var ErrPortInUse = errors.New("port already in use")

// Config says where and how to run ZooKeeper. Only Dir is required.
type Config struct {
	// Dir holds zoo.cfg, the data directory (Dir/data) and the log
	// (Dir/zookeeper.log). It is created if missing. Data survives a
	// restart on the same Dir.
	Dir string
	// Port is the client port on 127.0.0.1; 0 picks a free port.
	Port int
	// Java is the java binary; by default $JAVA, else "java" looked up in
	// PATH.
	Java string
	// Jar is the ZooKeeper jar, used as the class path; by default
	// $REGIONKV_ZOOKEEPER_JAR, else DefaultJar. It must name its
	// dependencies in its manifest, as Debian's does. If slf4j-simple.jar
	// sits in the same directory (Debian's libslf4j-java, a dependency of
	// zookeeper), it is added so that ZooKeeper's own log reaches
	// zookeeper.log.
	Jar string
	// StartTimeout bounds the wait for the server to serve requests;
	// DefaultStartTimeout if zero.
	StartTimeout time.Duration
	// Logger receives start, stop and unexpected-exit messages;
	// slog.Default() if nil.
	Logger *slog.Logger
}

// Server is a running ZooKeeper child process. Its methods are safe for
// concurrent use.
type Server struct {
	port    int
	dir     string
	logPath string
	logger  *slog.Logger
	cmd     *exec.Cmd

	done     chan struct{} // closed when the child has exited and been reaped
	exitErr  error         // cmd.Wait's result; set before done is closed
	waitErr  error         // Wait's result; set before done is closed
	stopping atomic.Bool   // set before Stop or kill signals the child
	ready    atomic.Bool   // set once Start has seen the server serve

	stopOnce sync.Once
	stopErr  error
}

// Start writes Dir/zoo.cfg, starts ZooKeeper and waits until it serves
// requests on 127.0.0.1. The context bounds only the start: once Start has
// returned, the server runs until Stop (or until the parent process dies).
// If the server does not become ready within StartTimeout, or ctx ends
// first, the child is killed. Errors from a failed start include the tail
// of the child's log.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("zkserver: Config.Dir is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, errors.Newf("zkserver: invalid port %d", cfg.Port)
	}
	jar, err := resolveJar(cfg.Jar)
	if err != nil {
		return nil, err
	}
	java, err := resolveJava(cfg.Java)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, errors.Wrapf(err, "zkserver: directory %s", cfg.Dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, errors.Wrap(err, "zkserver: creating the data directory")
	}
	classPath := jar
	if simple := filepath.Join(filepath.Dir(jar), "slf4j-simple.jar"); fileExists(simple) {
		classPath += string(os.PathListSeparator) + simple
	}

	// A port we picked can be taken by someone else before the JVM binds
	// it; then pick again. A port the caller chose is tried once.
	attempts := 1
	if cfg.Port == 0 {
		attempts = 3
	}
	for i := 1; ; i++ {
		port := cfg.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, err
			}
		} else if err := checkPortFree(port); err != nil {
			return nil, err
		}
		s, err := start(ctx, cfg, java, classPath, dir, port)
		if err == nil || i >= attempts || !errors.Is(err, ErrPortInUse) {
			return s, err
		}
		cfg.Logger.Warn("zkserver: picked port was taken, retrying", "port", port, "err", err)
	}
}

// start runs one attempt of Start on the given port.
func start(ctx context.Context, cfg Config, java, classPath, dir string, port int) (*Server, error) {
	began := time.Now()
	confPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(confPath, []byte(zooCfg(filepath.Join(dir, "data"), port)), 0o644); err != nil {
		return nil, errors.Wrap(err, "zkserver: writing zoo.cfg")
	}
	logPath := filepath.Join(dir, LogName)
	if fileExists(logPath) {
		// Keep one previous log, for diagnosing the run before a restart.
		if err := os.Rename(logPath, logPath+".1"); err != nil {
			return nil, errors.Wrap(err, "zkserver: rotating the log")
		}
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, errors.Wrap(err, "zkserver: creating the log")
	}

	cmd := exec.Command(java,
		"-Xmx256m",
		"-XX:+UseSerialGC",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSZ",
		"-cp", classPath,
		"org.apache.zookeeper.server.ZooKeeperServerMain", confPath)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	fmt.Fprintf(logFile, "# zkserver: %s\n", strings.Join(cmd.Args, " "))

	s := &Server{
		port:    port,
		dir:     dir,
		logPath: logPath,
		logger:  cfg.Logger,
		cmd:     cmd,
		done:    make(chan struct{}),
	}
	started := make(chan error, 1)
	go func() {
		// Linux's parent-death signal fires when the thread that started
		// the child exits, not the process. The Go runtime ends a thread
		// only when a goroutine locked to it exits, so keeping this
		// goroutine locked to its thread for the child's lifetime means
		// the signal fires only when the parent process dies.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		logFile.Close() // the child has its own descriptor
		started <- err
		if err != nil {
			return
		}
		s.exitErr = cmd.Wait()
		if !s.stopping.Load() {
			s.waitErr = errors.Newf("zkserver: ZooKeeper (pid %d, %s) exited unexpectedly (%s); log %s:\n%s",
				cmd.Process.Pid, s.Addr(), exitStatus(s.exitErr), logPath, logTail(logPath))
			if s.ready.Load() {
				cfg.Logger.Error("zkserver: ZooKeeper exited unexpectedly",
					"pid", cmd.Process.Pid, "addr", s.Addr(), "status", exitStatus(s.exitErr), "log", logPath)
			}
		}
		close(s.done)
	}()
	if err := <-started; err != nil {
		return nil, errors.Wrapf(err, "zkserver: starting %s", java)
	}
	cfg.Logger.Debug("zkserver: started ZooKeeper", "pid", cmd.Process.Pid, "port", port, "dir", dir)

	if err := s.awaitReady(ctx, cfg.StartTimeout); err != nil {
		return nil, err
	}
	cfg.Logger.Info("zkserver: ZooKeeper ready", "addr", s.Addr(), "pid", cmd.Process.Pid,
		"dir", dir, "elapsed", time.Since(began).Round(time.Millisecond))
	return s, nil
}

// awaitReady polls the server with srvr until it reports standalone mode.
// On failure the child is killed and reaped.
func (s *Server) awaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		select {
		case <-s.done:
			tail := logTail(s.logPath)
			if strings.Contains(tail, "Address already in use") {
				return errors.Mark(errors.Newf("zkserver: port %d on 127.0.0.1 is already in use: ZooKeeper exited (%s); log %s:\n%s",
					s.port, exitStatus(s.exitErr), s.logPath, tail), ErrPortInUse)
			}
			return errors.Newf("zkserver: ZooKeeper exited during startup (%s); log %s:\n%s",
				exitStatus(s.exitErr), s.logPath, tail)
		case <-ctx.Done():
			s.kill()
			return errors.Wrapf(ctx.Err(), "zkserver: start canceled; log %s:\n%s", s.logPath, logTail(s.logPath))
		case <-deadline.C:
			s.kill()
			return errors.Newf("zkserver: ZooKeeper on %s not ready after %s (last probe: %v); killed it; log %s:\n%s",
				s.Addr(), timeout, lastErr, s.logPath, logTail(s.logPath))
		case <-tick.C:
		}
		mode, err := Probe(s.Addr(), time.Second)
		switch {
		case err != nil:
			lastErr = err
		case mode != "standalone":
			// Our zoo.cfg defines no quorum, so this is not our server.
			s.kill()
			return errors.Mark(errors.Newf("zkserver: port %d on 127.0.0.1 is already in use by a ZooKeeper in mode %q",
				s.port, mode), ErrPortInUse)
		default:
			ours, dataDir, err := s.owned()
			if err != nil {
				lastErr = err
				continue
			}
			if !ours {
				s.kill()
				return errors.Mark(errors.Newf("zkserver: port %d on 127.0.0.1 is already in use by another ZooKeeper (data directory %s)",
					s.port, dataDir), ErrPortInUse)
			}
			select {
			case <-s.done: // it answered, but it died; report that on the next round
			default:
				s.ready.Store(true)
				return nil
			}
		}
	}
}

// kill ends the child with SIGKILL and waits until it is reaped. It is
// for failed starts, where there is nothing to shut down cleanly.
func (s *Server) kill() {
	s.stopping.Store(true)
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Addr returns the client address, "127.0.0.1:port".
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// Port returns the client port.
func (s *Server) Port() int { return s.port }

// Pid returns the child's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Dir returns the absolute directory holding zoo.cfg, the data and the log.
func (s *Server) Dir() string { return s.dir }

// LogPath returns the path of the child's log file.
func (s *Server) LogPath() string { return s.logPath }

// Done returns a channel that is closed when the child has exited and been
// reaped, whether by Stop or unexpectedly.
func (s *Server) Done() <-chan struct{} { return s.done }

// Wait blocks until the child has exited. It returns nil if the child was
// ended by Stop, and otherwise an error describing the exit with the tail
// of the log.
func (s *Server) Wait() error {
	<-s.done
	return s.waitErr
}

// Stop shuts the server down: SIGTERM, then SIGKILL if it has not exited
// after a few seconds. It returns once the child has been reaped. Stop is
// idempotent; later calls return the first call's result. Stopping a
// server that already exited on its own returns nil (Wait reports the
// exit).
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	s.stopping.Store(true)
	began := time.Now()
	pid := s.cmd.Process.Pid
	if err := terminate(s.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.logger.Warn("zkserver: SIGTERM failed, killing", "pid", pid, "err", err)
		_ = s.cmd.Process.Kill()
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		s.logger.Warn("zkserver: ZooKeeper ignored SIGTERM, killing", "pid", pid, "after", stopGrace)
		if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return errors.Wrapf(err, "zkserver: killing pid %d", pid)
		}
		<-s.done
	}
	s.logger.Info("zkserver: ZooKeeper stopped", "addr", s.Addr(), "pid", pid,
		"elapsed", time.Since(began).Round(time.Millisecond))
	return nil
}

// Probe sends ZooKeeper's "srvr" four-letter command to addr and returns
// the server's mode ("standalone", "leader", "follower", ...). It fails if
// the server is not listening, not serving requests yet, or does not allow
// srvr (4lw.commands.whitelist).
func Probe(addr string, timeout time.Duration) (mode string, err error) {
	return fourLetter(addr, "srvr", "Mode", timeout)
}

// fourLetter sends a four-letter command to addr and returns the value of
// the reply's line "key: value" or "key=value".
func fourLetter(addr, cmd, key string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", errors.Wrapf(err, "zkserver: %s to %s", cmd, addr)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", errors.Wrapf(err, "zkserver: %s to %s", cmd, addr)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", errors.Wrapf(err, "zkserver: %s to %s", cmd, addr)
	}
	reply, err := io.ReadAll(io.LimitReader(conn, 64<<10))
	if err != nil && len(reply) == 0 {
		return "", errors.Wrapf(err, "zkserver: %s to %s", cmd, addr)
	}
	sc := bufio.NewScanner(bytes.NewReader(reply))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.TrimSpace(v), nil
		}
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return strings.TrimSpace(v), nil
		}
	}
	text := strings.TrimSpace(string(reply))
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	if text == "" {
		return "", errors.Newf("zkserver: %s to %s: empty reply", cmd, addr)
	}
	return "", errors.Newf("zkserver: %s to %s: no %s in reply %q", cmd, addr, key, text)
}

// owned reports whether the server answering on the port is this child,
// by its data directory. A server that was already listening (when a
// picked port was taken in the meantime) answers srvr before the child
// fails to bind.
func (s *Server) owned() (bool, string, error) {
	dataDir, err := fourLetter(s.Addr(), "conf", "dataDir", time.Second)
	if err != nil {
		return false, "", err
	}
	want := filepath.Join(s.dir, "data")
	return dataDir == want || strings.HasPrefix(dataDir, want+string(filepath.Separator)), dataDir, nil
}

// zooCfg returns the contents of zoo.cfg.
func zooCfg(dataDir string, port int) string {
	return fmt.Sprintf(`# Written by regionkv's zkserver; rewritten on every start.
tickTime=2000
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
# The AdminServer (Jetty) would take port 8080.
admin.enableServer=false
# srvr for readiness, conf to check that the server answering is this one.
4lw.commands.whitelist=ruok,srvr,conf
`, dataDir, port)
}

func resolveJar(jar string) (string, error) {
	source := "Config.Jar"
	if jar == "" {
		jar, source = os.Getenv(EnvJar), "$"+EnvJar
	}
	if jar == "" {
		jar, source = DefaultJar, "the default"
	}
	st, err := os.Stat(jar)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errors.Mark(errors.Newf("zkserver: ZooKeeper jar %s (%s) not found: %s, or set %s to a zookeeper.jar",
				jar, source, InstallHint, EnvJar), ErrNotInstalled)
		}
		return "", errors.Wrapf(err, "zkserver: ZooKeeper jar %s", jar)
	}
	if st.IsDir() {
		return "", errors.Newf("zkserver: ZooKeeper jar %s (%s) is a directory", jar, source)
	}
	return jar, nil
}

func resolveJava(java string) (string, error) {
	source := "Config.Java"
	if java == "" {
		java, source = os.Getenv(EnvJava), "$"+EnvJava
	}
	if java == "" {
		java, source = "java", "PATH"
	}
	path, err := exec.LookPath(java)
	if err != nil {
		return "", errors.Mark(errors.Newf("zkserver: java (%s from %s) not found: %v; %s",
			java, source, err, InstallHint), ErrNotInstalled)
	}
	return path, nil
}

// freePort returns a port on 127.0.0.1 that nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, errors.Wrap(err, "zkserver: picking a free port")
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// checkPortFree fails with ErrPortInUse if the port cannot be bound on
// 127.0.0.1.
func checkPortFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return errors.Mark(errors.Newf("zkserver: port %d on 127.0.0.1 is already in use (another ZooKeeper?); "+
				"choose another port or use 0 to pick a free one", port), ErrPortInUse)
		}
		return errors.Wrapf(err, "zkserver: checking port %d", port)
	}
	return errors.Wrapf(l.Close(), "zkserver: checking port %d", port)
}

// exitStatus describes the result of cmd.Wait.
func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readLog returns the log's contents, at most the last 1 MiB.
func readLog(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const max = 1 << 20
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(-max, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return b
}

// logTail returns the last lines of the log, indented, for error messages.
func logTail(path string) string {
	const maxLines, maxBytes = 30, 8 << 10
	b := bytes.TrimRight(readLog(path), "\n")
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "\t(empty)"
	}
	return "\t" + strings.Join(lines, "\n\t")
}
