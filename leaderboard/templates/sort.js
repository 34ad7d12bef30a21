document.querySelectorAll('table.sortable th').forEach(th => {
  th.addEventListener('click', () => {
    const col = th.cellIndex;  // within its own table
    const table = th.closest('table'), body = table.tBodies[0];
    const asc = th.dataset.order !== 'asc'; th.dataset.order = asc ? 'asc' : 'desc';
    const key = r => { const t = r.cells[col].dataset.sort ?? r.cells[col].textContent;
                       const n = parseFloat(t); return isNaN(n) ? t : n; };
    [...body.rows].sort((a, b) => { const x = key(a), y = key(b);
      return (x > y ? 1 : x < y ? -1 : 0) * (asc ? 1 : -1); }).forEach(r => body.appendChild(r));
  });
});
