// Package packages breaks the rules on purpose: it imports the engine.
package packages

import _ "switchboard/engine"
