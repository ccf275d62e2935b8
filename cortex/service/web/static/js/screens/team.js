// The Team screen (a stub until it is built).
import {h} from "../dom.js";

export const routes = [
  {path: /^\/team$/, title: "Team", render: async () => h("section", {}, h("h1", {}, "Team"))},
];
