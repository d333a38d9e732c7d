// Package fstool provides the built-in file tools, each confined to one root
// directory: read_file, list_dir, grep and write_file (which needs
// approval). Their names and parameters are the ones the agcore command line
// documents; [New] makes all four and [ByName] the ones a --tools list names.
//
// # Confinement
//
// Every path argument is relative to the root (an absolute path is accepted
// only when it names something inside the root). A path is refused — the
// tool returns an error wrapping [ErrOutsideRoot] or [ErrInvalidPath], which
// the tool loop turns into an error result, and nothing is read or written —
// when:
//
//   - it contains a NUL byte;
//   - after filepath.Clean it climbs out of the root ("../x", "a/../../x");
//   - it is absolute and not inside the root ("/etc/passwd");
//   - after following symbolic links (filepath.EvalSymlinks) it lands
//     outside the root — for write_file the deepest existing ancestor of a
//     file that does not exist yet is resolved, and a dangling link is
//     followed to where it would create its target.
//
// The check yields a path free of symbolic links, which is then opened
// through an [os.Root] on the root directory, so a link swapped in between
// the check and the open cannot lead outside either. grep does not follow
// symbolic links it meets while walking a directory; list_dir shows a link
// to a directory inside the root with a trailing "/" and any other link as a
// plain entry.
//
// # Secrets
//
// Keys and credentials are refused unless the user allows them: a path that
// matches one of [DefaultSecretPatterns] (.ssh/, .aws/, .config/gcloud/,
// .gnupg/, .env*, *.pem, *.key, id_*, .netrc, .pgpass, .git-credentials) in
// any of its names — as given, or once its symbolic links are followed — is
// refused by read_file and write_file with an error wrapping [ErrSecret] (a
// [*SecretError] naming the pattern and how the user allows it), and so is
// list_dir or grep of such a directory. grep skips secret files and
// directories inside the one it searches and ends its result with how many
// it skipped; list_dir leaves them out of its listing and ends it with how
// many it left out, so the model knows they exist without asking for them.
// A directory pattern also matches the directories the root is in: a root
// inside ~/.aws has everything under it refused.
//
// [Options.AllowSecrets] lifts patterns: the pattern itself (".env*"), "*"
// for all, or a glob for some names (".env.example") or paths from the root
// ("config/dev.pem"); [Options.SecretPatterns] replaces the list.
//
// # Limits
//
// Results are capped ([Options]): read_file at MaxReadBytes, list_dir and
// grep at MaxOutputBytes (and grep at MaxMatches lines); a cut result ends
// with a bracketed marker saying what was left out and, for read_file, the
// offset to continue from. The cap includes the marker, so a result never
// exceeds it. Binary files (a NUL byte in their first 8 KiB) are refused by
// read_file and skipped by grep.
//
// This package imports only tool and the standard library.
package fstool
