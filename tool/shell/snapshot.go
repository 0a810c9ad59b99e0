package shell

import (
	"time"

	"github.com/regionkv/regionkv/client"
)

// The snapshot commands, as HBase's shell has them (admin.rb and
// commands/*snapshot*.rb), over client's snapshot calls.

func cmdSnapshot(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 2, 3); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	name, err := nameArg("Snapshot name", args[1])
	if err != nil {
		return "", err
	}
	opts := &client.SnapshotOptions{}
	if len(args) == 3 {
		h, ok := args[2].(*Hash)
		if !ok {
			return "", usagef("snapshot options must be a Hash, got %s", inspect(args[2]))
		}
		for i, k := range h.Keys {
			key, _ := k.(*Str)
			if key == nil {
				return "", usagef("snapshot option %s is not a name", inspect(k))
			}
			switch string(key.B) {
			case "SKIP_FLUSH":
				skip, err := boolArg("SKIP_FLUSH", h.Vals[i])
				if err != nil {
					return "", err
				}
				if skip {
					opts.Type = client.SnapshotSkipFlush
				}
			case "TTL":
				n, err := intArg("TTL", h.Vals[i])
				if err != nil {
					return "", err
				}
				opts.TTL = time.Duration(n) * time.Second
			default:
				return "", usagef("unknown snapshot option %s (SKIP_FLUSH, TTL)", key.B)
			}
		}
	}
	return "", s.c.Snapshot(s.ctx, table, name, opts)
}

func cmdListSnapshots(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 0, 1); err != nil {
		return "", err
	}
	regex := ".*"
	if len(args) == 1 {
		r, err := nameArg("the regular expression", args[0])
		if err != nil {
			return "", err
		}
		regex = r
	}
	re, err := compileJavaRegex(regex)
	if err != nil {
		return "", err
	}
	snaps, err := s.c.ListSnapshots(s.ctx)
	if err != nil {
		return "", err
	}
	s.f.header("SNAPSHOT", "TABLE + CREATION TIME")
	var names []string
	for _, sn := range snaps {
		if !re.MatchString(sn.Name) {
			continue
		}
		// Ruby's Time#to_s of the creation time in whole seconds.
		created := time.Unix(sn.CreationTime.Unix(), 0).Format("2006-01-02 15:04:05 -0700")
		s.f.row(true, sn.Name, sn.Table+" ("+created+")")
		names = append(names, sn.Name)
	}
	s.f.footer(len(names))
	return inspectStrings(names), nil
}

func cmdRestoreSnapshot(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 2); err != nil {
		return "", err
	}
	name, err := nameArg("Snapshot name", args[0])
	if err != nil {
		return "", err
	}
	if len(args) == 2 {
		if acl, err := boolArg("restore_acl", args[1]); err != nil {
			return "", err
		} else if acl {
			return "", usagef("restore_acl: RegionKV has no ACLs to restore")
		}
	}
	return "", s.c.RestoreSnapshot(s.ctx, name)
}

func cmdCloneSnapshot(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 2, 3); err != nil {
		return "", err
	}
	name, err := nameArg("Snapshot name", args[0])
	if err != nil {
		return "", err
	}
	table, err := tableArg(args[1])
	if err != nil {
		return "", err
	}
	if len(args) == 3 {
		if acl, err := boolArg("restore_acl", args[2]); err != nil {
			return "", err
		} else if acl {
			return "", usagef("restore_acl: RegionKV has no ACLs to restore")
		}
	}
	return "", s.c.CloneSnapshot(s.ctx, name, table)
}

func cmdDeleteSnapshot(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	name, err := nameArg("Snapshot name", args[0])
	if err != nil {
		return "", err
	}
	return "", s.c.DeleteSnapshot(s.ctx, name)
}
