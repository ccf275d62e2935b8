# top-up of long memories (hand-written context)
_by = {mm["name"]: mm for mm in MEMS}
for _name, _pre, _suf in [
("long_pm_ci_outage", "Written by Elif, who was trying to merge the Vitest migration that day.", "Postscript: the stripe-mock image is now pulled from our own registry mirror, which came out of this day even though nobody owned the action item."),
("long_mobile_web", "Participants: Jun, Marcus, with data from Elif's analytics dashboard.", "Follow-up: the responsive work shipped in August; the phone share of sessions went up slightly (16%) and support tickets about the mobile layout dropped to nearly zero. Nobody has asked for a native app since."),
("long_tenant_lifecycle", "Author: Priya.", ""),
("long_hiring_notes", "", "Diversity: job ad reviewed with a gender-decoder tool; we list the salary band in the ad, which noticeably increased applications compared to the last posting."),
("long_vendor_eval", "Author: Tomás, with benchmarks run by Aisha on a staging copy.", ""),
("long_pm_deploy_secret", "", "Timeline: 10:05 release PR merged, 10:12 deploy workflow green, 10:40 Nadia noticed in Grafana that the running task definition revision was still the old one, 11:30 cause found in the ECS service events, 12:05 secret key added and redeployed."),
("long_accounting_export", "Author: Nadia, with input from the Müller & Partner tax advisor.", "Effort estimate: three weeks for one engineer including the settings UI. Risks: DATEV changes the format occasionally; we will pin to version 700 and watch their developer newsletter."),
]:
    _c = _by[_name]["content"]
    _by[_name]["content"] = "\n\n".join(x for x in (_pre, _c, _suf) if x)
_by["long_pm_ci_outage"]["content"] += " Elif's Vitest PR finally merged the next morning."
_by["long_mobile_web"]["content"] += "\n\nSide note from Jun: if we ever do build something native, Expo would be the starting point, since it lets us share the generated API client and the zod schemas with the web app."
_by["long_hiring_notes"]["content"] += " We also removed the 'rockstar' wording from the old ad."
_by["long_vendor_eval"]["content"] += "\n\nFinal decision: Meilisearch, confirmed in Q3 planning."
