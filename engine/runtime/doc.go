// Package runtime loads the runtime file of SPEC section 4: the operator's file that binds a
// package to a machine (listeners, database, secrets, provider endpoints and credentials,
// callback verifiers, dispatch limits, retention, sandbox limits).
//
// Load reads the file, substitutes ${VAR} and ${VAR:-default} in string values, decodes it
// against closed mappings (an unknown key is an error naming file, line and member), validates
// every member, makes every path absolute against the file's folder and resolves every secret
// it references, all before anything binds. It collects every problem it finds into one
// *LoadError instead of stopping at the first. CheckPackage then cross-checks a loaded runtime
// against the loaded package it is meant to serve.
//
// The result is one typed value, built once and passed down to constructors; nothing here keeps
// package-level mutable state. Secret values live only in Secret, whose String, Format, JSON
// and log forms show the reference, never the value. No diagnostic contains a value read from
// the environment or a secret, nor a value of the file: diagnostics name the member (and
// quote only keys, variable names, secret names and, unless built from ${…}, resolved paths).
//
// Environment substitution (decided here, SPEC is silent on the details):
//   - ${NAME} is replaced by the variable's value; an unset or empty variable is an error
//     naming the member (getenv cannot tell unset from empty, so both count as unset).
//   - ${NAME:-default} uses default when the variable is unset or empty; default is literal
//     text up to the first "}" and is not expanded again.
//   - $$ is a literal "$" (so $${NAME} is the text "${NAME}"); a "$" followed by anything else
//     stays as it is. Substituted text is never scanned again.
//   - Substitution applies to every scalar value, never to keys. A member that wants a number
//     or a boolean accepts a value built by substitution when the substituted text is one
//     (port: ${SMTP_PORT:-587}); a literal quoted "587" stays a string and is refused.
//
// runtime imports the standard library, go.yaml.in/yaml/v3, packages (only for CheckPackage)
// and the leaf packages engine/pubkey and engine/adapterparam (the key forms and parameter rule
// it shares with the HTTP gateway provider). It must never import store, providers, scripting,
// goja or libp2p.
package runtime
