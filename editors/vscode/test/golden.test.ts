// The protocol mirror in src/protocol.ts against what the real server sends:
// tests/golden/*.json are recorded from a real `kenning serve --stdio` by
// tests/lsp/test_golden.py. Each sample is checked against the TypeScript type
// with the compiler's own type checker: a field the server sends that the type
// does not declare fails, a required field the server does not send fails, and
// so does an optional field that no sample ever carries (a field on one side only).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

import ts from "typescript";

const root = join(__dirname, "..", "..");
const goldenDir = join(root, "..", "..", "tests", "golden");
const protocolPath = join(root, "src", "protocol.ts");

interface Golden {
  method: string;
  description: string;
  samples: unknown[];
}

function golden(name: string): Golden {
  return JSON.parse(readFileSync(join(goldenDir, `${name}.json`), "utf8")) as Golden;
}

const program = ts.createProgram([protocolPath], {
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
});
const checker = program.getTypeChecker();
const source = program.getSourceFile(protocolPath);
assert.ok(source !== undefined, "src/protocol.ts did not load");
const moduleSymbol = checker.getSymbolAtLocation(source);
assert.ok(moduleSymbol !== undefined);
const exported = new Map(checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));

/** The type `name` exported by src/protocol.ts, optionally as an array of it. */
function protocolType(name: string): ts.Type {
  const symbol = exported.get(name);
  assert.ok(symbol !== undefined, `src/protocol.ts exports no ${name}`);
  return checker.getDeclaredTypeOfSymbol(symbol);
}

class Validator {
  readonly errors: string[] = [];
  /** "Interface.field" → whether some sample carried it */
  readonly seen = new Map<string, boolean>();

  check(value: unknown, type: ts.Type, path: string): void {
    const problem = this.mismatch(value, type, path, true);
    if (problem !== undefined) {
      this.errors.push(problem);
    }
  }

  /** A description of why `value` is not a `type`, or undefined; `record` notes fields seen. */
  private mismatch(value: unknown, type: ts.Type, path: string, record: boolean): string | undefined {
    const shown = checker.typeToString(type);
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) {
      return undefined;
    }
    if (type.isUnion()) {
      const members = type.types.filter((t) => !(t.flags & ts.TypeFlags.Undefined));
      const reasons: string[] = [];
      for (const member of members) {
        // First find the member that fits, then walk it again recording its fields.
        const reason = this.mismatch(value, member, path, false);
        if (reason === undefined) {
          return record ? this.mismatch(value, member, path, true) : undefined;
        }
        reasons.push(reason);
      }
      return `${path}: ${JSON.stringify(value)} is none of ${shown} (${reasons.join("; ")})`;
    }
    if (type.flags & ts.TypeFlags.Null) {
      return value === null ? undefined : `${path}: expected null, got ${JSON.stringify(value)}`;
    }
    if (type.flags & ts.TypeFlags.String) {
      return typeof value === "string" ? undefined : `${path}: expected a string`;
    }
    if (type.flags & ts.TypeFlags.Number) {
      return typeof value === "number" ? undefined : `${path}: expected a number`;
    }
    if (type.flags & ts.TypeFlags.BooleanLiteral) {
      return value === (shown === "true") ? undefined : `${path}: expected ${shown}`;
    }
    if (type.isStringLiteral() || type.isNumberLiteral()) {
      return value === type.value ? undefined : `${path}: expected ${shown}, got ${JSON.stringify(value)}`;
    }
    if (checker.isArrayType(type)) {
      if (!Array.isArray(value)) {
        return `${path}: expected an array`;
      }
      const element = checker.getTypeArguments(type as ts.TypeReference)[0];
      for (const [i, item] of value.entries()) {
        const reason = this.mismatch(item, element, `${path}[${i}]`, record);
        if (reason !== undefined) {
          return reason;
        }
      }
      return undefined;
    }
    if (type.flags & ts.TypeFlags.Object) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return `${path}: expected an object (${shown})`;
      }
      const object = value as Record<string, unknown>;
      const properties = checker.getPropertiesOfType(type);
      const declared = new Set(properties.map((p) => p.name));
      for (const key of Object.keys(object)) {
        if (!declared.has(key)) {
          return `${path}.${key}: the server sends it, ${shown} does not declare it`;
        }
      }
      for (const property of properties) {
        const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
        // keyed by the declaring interface: IndexStatusReport's inherited fields are IndexStatus's
        const owner = property.valueDeclaration?.parent;
        const ownerName = owner !== undefined && ts.isInterfaceDeclaration(owner) ? owner.name.text : shown;
        const key = `${ownerName}.${property.name}`;
        if (record && !this.seen.has(key)) {
          this.seen.set(key, false);
        }
        if (!(property.name in object)) {
          if (!optional) {
            return `${path}.${property.name}: ${shown} requires it, the server did not send it`;
          }
          continue;
        }
        if (record) {
          this.seen.set(key, true);
        }
        const reason = this.mismatch(
          object[property.name],
          checker.getTypeOfSymbol(property),
          `${path}.${property.name}`,
          record,
        );
        if (reason !== undefined) {
          return reason;
        }
      }
      return undefined;
    }
    return `${path}: no rule for ${shown}`;
  }
}

/** golden file → the TypeScript type of each sample */
const EXPECTED: Record<string, { type: string; array?: boolean; method: string }> = {
  indexStatus: { type: "IndexStatus", method: "kenning/indexStatus" },
  semanticSearch: { type: "SemanticSearchResult", method: "workspace/semanticSearch" },
  similar: { type: "SemanticSearchResult", method: "kenning/similar" },
  status: { type: "IndexStatusReport", array: true, method: "workspace/executeCommand kenning.status" },
  invalidParams: { type: "ResponseErrorObject", method: "workspace/semanticSearch" },
};

describe("golden protocol samples (tests/golden, recorded from the real server)", () => {
  const validator = new Validator();

  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}.json matches ${expected.type}${expected.array === true ? "[]" : ""}`, () => {
      const file = golden(name);
      assert.equal(file.method, expected.method);
      assert.ok(file.samples.length > 0);
      const type = protocolType(expected.type);
      for (const [i, sample] of file.samples.entries()) {
        if (expected.array === true) {
          assert.ok(Array.isArray(sample), `${name}[${i}] is not an array`);
          sample.forEach((item, j) => validator.check(item, type, `${name}[${i}][${j}]`));
        } else {
          validator.check(sample, type, `${name}[${i}]`);
        }
      }
      assert.deepEqual(validator.errors, []);
    });
  }

  it("kenning.reindex answers null", () => {
    assert.deepEqual(golden("reindex").samples, [null]);
  });

  it("the method names are the ones src/protocol.ts uses", async () => {
    const protocol = await import("../src/protocol");
    assert.equal(golden("semanticSearch").method, protocol.semanticSearch.method);
    assert.equal(golden("similar").method, protocol.similar.method);
    assert.equal(golden("indexStatus").method, protocol.indexStatus.method);
    assert.equal(golden("status").method, `workspace/executeCommand ${protocol.ServerCommands.status}`);
    assert.equal(golden("reindex").method, `workspace/executeCommand ${protocol.ServerCommands.reindex}`);
    assert.equal(
      (golden("invalidParams").samples[0] as { code: number }).code,
      protocol.ErrorCodes.InvalidParams,
    );
  });

  it("every field the types declare is sent in some sample", () => {
    const never = [...validator.seen.entries()].filter(([, seen]) => !seen).map(([key]) => key);
    // ResponseErrorObject.data is JSON-RPC's, optional there and never sent by kenning.
    assert.deepEqual(
      never.filter((key) => key !== "ResponseErrorObject.data"),
      [],
    );
  });
});
