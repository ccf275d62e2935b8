# top-up of batch 5 long memories (hand-written context)
_by = {mm["name"]: mm for mm in MEMS}
for _name, _pre, _suf in [
("long_db_conventions", "Written by Priya during the first week of the FastAPI rewrite, after reviewing the Django prototype's schema, which had four different ways to name a foreign key and several money columns stored as float. The rules below apply to every new table and to any table you substantially change; we don't rename old objects just for consistency.",
 "When in doubt, look at invoices and line_items, which are the reference implementation of all of the above."),
("long_web_state", "Context: the web app grew from a prototype where every page fetched in useEffect and kept the result in Context, which produced double fetching, stale lists after mutations, and components that re-rendered on any change anywhere.", ""),
("long_pm_migration_heads", "Severity: internal (SEV4). Author: Tomás.",
 "Time lost: about four hours of blocked releases, plus an hour of discussion about merge revisions. Cheap lesson, but easy to repeat when two people work on the same area in parallel, which happens a lot during billing pushes."),
("long_localdev_https", "", "Security note: the tunnel exposes your local api to the internet while it runs. Stop it when you're done, never run it with production data in your local database, and don't disable auth to make testing easier."),
("long_result_backend_dummy", "", ""),
("long_backfill_guide", "", "Example to copy: ledgerly/backfills/20260620_populate_invoice_reminder_at.py is small, well-commented and covers all the hooks."),
("long_pm_signup_spam", "Severity: SEV2. Authors: Priya and Marcus (Marcus handled communication with the email provider).",
 "Customer impact: roughly 2,300 legitimate invoice emails were delayed by 2 to 7 hours on June 16. We posted a status page notice; nobody lost data."),
("long_cache_design", "Author: Tomás, after the July performance review showed several endpoints recomputing the same values on every request. Before this there was no shared caching helper and two ad-hoc caches in module-level dicts, which were per-process and never invalidated.",
 "Monitoring: hit ratio per cache name is exported as a metric; anything under 50% is probably not worth caching and should be removed."),
]:
    if _name in _by:
        _c = _by[_name]["content"]
        _by[_name]["content"] = "\n\n".join(x for x in (_pre, _c, _suf) if x)
_by["result_backend2"]["content"] = "Author: Priya, after discussing with Tomás and Aisha. Context: the task result backend was configured by default when we moved from RQ to Celery in April; nobody decided it deliberately.\n\n" + _by["result_backend2"]["content"] + "\n\nRollout: the change shipped in release 1.14 together with the jobs table migration; the old export progress polling was kept working for one release by mapping AsyncResult states to job rows."
_by["result_backend2"]["content"] += " Flower's task list is still useful for seeing what is running right now."
_by["long_pm_signup_spam"]["content"] += " Support handled 40 tickets about it over two days."
