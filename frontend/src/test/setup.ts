import "@testing-library/jest-dom/vitest";
import { cleanup, configure } from "@testing-library/react";
import { afterEach, beforeEach } from "vitest";

import i18n from "../i18n";

// The whole suite shares two cores with its workers: a page may take more than the default
// second to settle, which is slowness, not a failure.
configure({ asyncUtilTimeout: 5000 });

beforeEach(async () => {
  window.localStorage.clear();
  await i18n.changeLanguage("en");
});

// Without vitest globals, Testing Library cannot register its own automatic cleanup.
afterEach(() => {
  cleanup();
});
