package provider

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	"github.com/zclconf/go-cty/cty"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// examplesDir is the repository's examples/ folder, seen from this package.
const examplesDir = "../../examples"

// How an example's provider blocks meet the test coordinator.
type providerMode int

const (
	// replaceProvider swaps the default provider block for the harness's
	// (env.ProviderConfig) and points aliased blocks at the test coordinator.
	replaceProvider providerMode = iota
	// repointProvider keeps every provider block with all its settings but
	// points it at the test coordinator (endpoint, and username/password
	// when it authenticates with a username).
	repointProvider
	// providerAsWritten keeps provider blocks untouched: the example takes
	// its endpoint and credentials from input variables the test supplies.
	providerAsWritten
)

// exampleRewrite says how example files become a test configuration.
type exampleRewrite struct {
	provider providerMode
	// moduleSources maps module call names to local module folders
	// (relative to this package) that stand in for remote sources.
	moduleSources map[string]string
}

// exampleConfig reads example files (paths under examples/) and turns them
// into one configuration for env's coordinator: `terraform` blocks go (the
// harness declares the provider source) and provider blocks are handled as
// rw.provider says.
func exampleConfig(t *testing.T, env *acctest.Env, files []string, rw exampleRewrite) string {
	t.Helper()
	var b strings.Builder
	if rw.provider != replaceProvider {
		fmt.Fprintf(&b, "terraform {\n  required_providers {\n    redisstreamcoordinator = {\n      source = %q\n    }\n  }\n}\n", acctest.ProviderSource)
	} else {
		b.WriteString(env.ProviderConfig())
	}
	for _, rel := range files {
		b.WriteString(rewriteExample(t, env, "examples/"+rel, parseExample(t, rel), rw))
	}
	return b.String()
}

// rewriteExample turns one parsed example (from the file named by label)
// into configuration for env's coordinator, as exampleConfig describes.
func rewriteExample(t *testing.T, env *acctest.Env, label string, f *hclwrite.File, rw exampleRewrite) string {
	t.Helper()
	body := f.Body()
	for _, block := range body.Blocks() {
		switch {
		case block.Type() == "terraform":
			body.RemoveBlock(block)
		case block.Type() == "provider" && len(block.Labels()) == 1 && block.Labels()[0] == TypeName:
			aliased := block.Body().GetAttribute("alias") != nil
			switch {
			case rw.provider == providerAsWritten:
			case rw.provider == replaceProvider && !aliased:
				body.RemoveBlock(block)
			default:
				pointAtTestCoordinator(block.Body(), env)
			}
		case block.Type() == "module" && len(block.Labels()) == 1:
			if local, ok := rw.moduleSources[block.Labels()[0]]; ok {
				abs, err := filepath.Abs(local)
				if err != nil {
					t.Fatal(err)
				}
				block.Body().SetAttributeValue("source", cty.StringVal(abs))
			}
		}
	}
	return fmt.Sprintf("\n# ---- %s\n%s", label, hclwrite.Format(f.Bytes()))
}

// pointAtTestCoordinator replaces the endpoint of a provider block, and the
// credentials when the block authenticates with a username. A block that
// authenticates with a token keeps it: the test supplies a real token.
func pointAtTestCoordinator(body *hclwrite.Body, env *acctest.Env) {
	body.SetAttributeValue("endpoint", cty.StringVal(env.Endpoint))
	if body.GetAttribute("username") != nil {
		body.SetAttributeValue("username", cty.StringVal(env.Writer.Username))
		body.SetAttributeValue("password", cty.StringVal(env.Writer.Password))
	}
}

func parseExample(t *testing.T, rel string) *hclwrite.File {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(examplesDir, rel))
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	f, diags := hclwrite.ParseConfig(src, rel, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("examples/%s does not parse: %s", rel, diags.Error())
	}
	return f
}

// Terraform features examples may use, and the version that introduced
// each: an example using one is skipped (SkipBelow, a declared floor) on
// an older Terraform.
var terraformFeatureFloors = []struct {
	pattern *regexp.Regexp
	floor   *version.Version
}{
	{regexp.MustCompile(`(?m)^\s*identity\s*=\s*\{`), tfversion.Version1_12_0}, // import blocks by identity
	{regexp.MustCompile(`(?m)^\s*ephemeral\s+"`), tfversion.Version1_10_0},     // ephemeral resources
	{regexp.MustCompile(`provider::`), tfversion.Version1_8_0},                 // provider-defined functions
	{regexp.MustCompile(`(?m)^\s*removed\s*\{`), tfversion.Version1_7_0},       // removed blocks
	{regexp.MustCompile(`(?m)^\s*import\s*\{`), tfversion.Version1_5_0},        // import blocks
	{regexp.MustCompile(`(?m)^\s*check\s+"`), tfversion.Version1_5_0},          // check blocks
}

// versionChecks declares the Terraform floor of a configuration.
func versionChecks(cfg string) []tfversion.TerraformVersionCheck {
	var highest *version.Version
	for _, f := range terraformFeatureFloors {
		if f.pattern.MatchString(cfg) && (highest == nil || f.floor.GreaterThan(highest)) {
			highest = f.floor
		}
	}
	if highest == nil {
		return nil
	}
	return []tfversion.TerraformVersionCheck{tfversion.SkipBelow(highest)}
}

// importCommand is one `terraform import <address> <id>` line of an
// import.sh example.
type importCommand struct{ address, resourceType, id string }

var importLine = regexp.MustCompile(`^terraform import ([a-z0-9_]+)\.([A-Za-z0-9_-]+) (\S+)$`)

// parseImportScript reads the commands of an import.sh example; anything
// but comments, blank lines and import commands is an error.
func parseImportScript(rel string) ([]importCommand, error) {
	f, err := os.Open(filepath.Join(examplesDir, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cmds []importCommand
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := importLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("examples/%s:%d: want `terraform import <type>.<name> <stream_prefix>/<consumer_group>`, got %q", rel, n, line)
		}
		cmds = append(cmds, importCommand{address: m[1] + "." + m[2], resourceType: m[1], id: m[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("examples/%s has no terraform import command", rel)
	}
	return cmds, nil
}

// exampleFiles lists every file under examples/, relative to it.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(examplesDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(examplesDir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatalf("list examples: %v", err)
	}
	sort.Strings(files)
	return files
}
