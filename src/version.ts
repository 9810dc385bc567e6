// Folio's version: the release in package.json and the API interface version that
// decisions.md fixes at "1.0.0", reported as meta.version, the OpenAPI info.version and by
// `folio --version`. A constant rather than package.json read at start-up, so that dist/
// runs wherever it is copied; test/unit/version.test.ts fails when package.json or
// CHANGELOG.md says otherwise.
export const VERSION = '1.0.0';
