// Package logenv decides whether the provider process logs at all.
//
// Terraform (and OpenTofu) only show a provider's logs when the user sets
// TF_LOG or TF_LOG_PROVIDER; the plugin SDK loggers nevertheless default to
// TRACE and JSON-encode every line, which the plugin host then parses and
// throws away (hashicorp/terraform-plugin-framework issues 721 and 1269).
// When the user has set no variable that could make those logs visible,
// QuietDefaults returns the settings that switch every logger of the process
// off before the provider serves: the SDK's root logger (TF_LOG_SDK), its
// framework and protocol subsystems (TF_LOG_SDK_FRAMEWORK, TF_LOG_SDK_PROTO)
// and the provider's own root logger (TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR,
// which its coordinator subsystem inherits). The subsystems are set
// explicitly although they would inherit OFF from the root: terraform-plugin-log
// skips a subsystem's line before building its fields only when the
// subsystem's own level says so; with the level merely inherited it builds
// every TRACE line's fields for hclog to drop (about 7% of the provider's CPU
// in a plan of 2,000 resources). Any such variable set keeps today's
// behaviour exactly: nothing is changed.
package logenv

import (
	"os"
	"sort"
	"strings"
)

// ProviderLogEnv is the variable terraform-plugin-go reads for the level of
// the provider's root logger (TF_LOG_PROVIDER_ + the provider type name).
const ProviderLogEnv = "TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR"

// SDKLogEnv is the level of the plugin SDK's root logger.
const SDKLogEnv = "TF_LOG_SDK"

// FrameworkLogEnv and ProtoLogEnv are the levels of the SDK's framework and
// protocol subsystems.
const (
	FrameworkLogEnv = "TF_LOG_SDK_FRAMEWORK"
	ProtoLogEnv     = "TF_LOG_SDK_PROTO"
)

// Off is the level that skips a log line before it is encoded.
const Off = "OFF"

// userSettings reports whether name is one of the variables that make the
// provider's logs visible or set their level: TF_LOG and TF_LOG_PROVIDER
// (read by Terraform to pass provider logs through), and TF_LOG_SDK* and
// TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR* (read by the provider process).
func userSetting(name string) bool {
	return name == "TF_LOG" || name == "TF_LOG_PROVIDER" ||
		strings.HasPrefix(name, SDKLogEnv) || strings.HasPrefix(name, ProviderLogEnv)
}

// QuietDefaults returns the variables to set (name to value) so that the
// process produces no logs, given its environment as os.Environ returns it;
// nil when the user set any logging variable (a variable set to the empty
// string counts as unset, as it does for Terraform and the SDK).
func QuietDefaults(environ []string) map[string]string {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if value != "" && userSetting(name) {
			return nil
		}
	}
	return map[string]string{SDKLogEnv: Off, FrameworkLogEnv: Off, ProtoLogEnv: Off, ProviderLogEnv: Off}
}

// Apply sets QuietDefaults in the process environment and returns the names
// it set, sorted (none when the user asked for logs). Call it before the
// provider serves: the SDK reads the levels when it creates its loggers.
func Apply() ([]string, error) {
	set := QuietDefaults(os.Environ())
	names := make([]string, 0, len(set))
	for name, value := range set {
		if err := os.Setenv(name, value); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}
