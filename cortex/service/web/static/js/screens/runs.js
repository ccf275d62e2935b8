// The Runs screen (a stub until it is built).
import {h} from "../dom.js";

export const routes = [
  {path: /^\/runs$/, title: "Runs", render: async () => h("section", {}, h("h1", {}, "Runs"))},
];
