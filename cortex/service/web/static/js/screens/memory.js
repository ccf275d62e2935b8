// The Memory screen (a stub until it is built).
import {h} from "../dom.js";

export const routes = [
  {path: /^\/memory$/, title: "Memory", render: async () => h("section", {}, h("h1", {}, "Memory"))},
];
