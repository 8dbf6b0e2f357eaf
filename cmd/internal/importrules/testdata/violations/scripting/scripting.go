// Package scripting imports a leaf package, so it is not a leaf itself.
package scripting

import _ "switchboard/providers/leafkit"
