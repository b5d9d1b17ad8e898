package logenv

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestQuietDefaults(t *testing.T) {
	quiet := map[string]string{"TF_LOG_SDK": "OFF", "TF_LOG_SDK_FRAMEWORK": "OFF", "TF_LOG_SDK_PROTO": "OFF", "TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR": "OFF"}
	for _, tc := range []struct {
		name    string
		environ []string
		want    map[string]string
	}{
		{"nothing set", []string{"PATH=/usr/bin", "HOME=/root"}, quiet},
		{"empty values count as unset", []string{"TF_LOG=", "TF_LOG_PROVIDER=", "TF_LOG_SDK="}, quiet},
		{"Terraform-only settings do not show provider logs", []string{"TF_LOG_CORE=TRACE", "TF_LOG_PATH=/tmp/tf.log"}, quiet},
		{"another provider's level", []string{"TF_LOG_PROVIDER_AWS=DEBUG"}, quiet},
		{"a value without =", []string{"TF_LOG"}, quiet},
		{"TF_LOG", []string{"TF_LOG=DEBUG"}, nil},
		{"TF_LOG=JSON", []string{"TF_LOG=JSON"}, nil},
		{"TF_LOG=OFF is still the user's choice", []string{"TF_LOG=OFF"}, nil},
		{"TF_LOG_PROVIDER", []string{"TF_LOG_PROVIDER=INFO"}, nil},
		{"TF_LOG_SDK", []string{"TF_LOG_SDK=TRACE"}, nil},
		{"TF_LOG_SDK_FRAMEWORK", []string{"TF_LOG_SDK_FRAMEWORK=DEBUG"}, nil},
		{"TF_LOG_SDK_PROTO", []string{"TF_LOG_SDK_PROTO=TRACE"}, nil},
		{"the provider's level", []string{"TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR=WARN"}, nil},
		{"the coordinator subsystem", []string{"TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR_COORDINATOR=DEBUG"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := QuietDefaults(tc.environ); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("QuietDefaults(%q) = %v, want %v", tc.environ, got, tc.want)
			}
		})
	}
}

func TestApplySetsTheQuietLevelsOnlyWhenNothingIsSet(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "TF_LOG") {
			t.Setenv(name, "") // restored after the test
			_ = os.Unsetenv(name)
		}
	}
	all := []string{ProviderLogEnv, SDKLogEnv, FrameworkLogEnv, ProtoLogEnv}
	for _, name := range all {
		t.Setenv(name, "")
	}
	names, err := Apply()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ProviderLogEnv, SDKLogEnv, FrameworkLogEnv, ProtoLogEnv}; !reflect.DeepEqual(names, want) {
		t.Errorf("Apply set %v, want %v", names, want)
	}
	for _, name := range all {
		if os.Getenv(name) != Off {
			t.Errorf("after Apply: %s=%q, want OFF", name, os.Getenv(name))
		}
	}

	for _, name := range all {
		t.Setenv(name, "")
	}
	t.Setenv("TF_LOG", "DEBUG")
	if names, err := Apply(); err != nil || len(names) != 0 {
		t.Errorf("with TF_LOG=DEBUG Apply set %v (%v), want nothing", names, err)
	}
	for _, name := range all {
		if os.Getenv(name) != "" {
			t.Errorf("with TF_LOG=DEBUG Apply changed %s", name)
		}
	}
}
