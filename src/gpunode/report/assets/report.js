(function(){
const NS='http://www.w3.org/2000/svg';
function arrows(node){
  const svg=node.querySelector('svg.arrows'); if(!svg) return;
  svg.innerHTML='<defs><marker id="m-'+node.dataset.node+'" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '+
    'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#24292f"/></marker></defs>';
  const box=svg.getBoundingClientRect();
  node.querySelectorAll('.comp[data-blocked-by]').forEach(function(c){
    if(!c.dataset.blockedBy) return;
    c.dataset.blockedBy.split(' ').forEach(function(id){
      const t=document.getElementById(id); if(!t) return;
      const a=c.getBoundingClientRect(), b=t.getBoundingClientRect();
      const x1=a.left+a.width/2-box.left, y1=a.bottom-box.top, x2=b.left+b.width/2-box.left, y2=b.top-box.top;
      const p=document.createElementNS(NS,'path');
      p.setAttribute('d','M'+x1+','+y1+' C'+x1+','+(y1+24)+' '+x2+','+(y2-24)+' '+x2+','+y2);
      p.setAttribute('marker-end','url(#m-'+node.dataset.node+')');
      p.setAttribute('class','arrow'); svg.appendChild(p);
    });
  });
}
function drawAll(){ document.querySelectorAll('#stacks .grid .node:not(.hidden)').forEach(arrows); }
function filter(){
  const st=document.getElementById('f-status').value, ly=document.getElementById('f-layer').value,
        nm=document.getElementById('f-node').value.trim().toLowerCase();
  const hit=function(names){ return !nm || names.toLowerCase().split(' ').some(function(n){return n.includes(nm);}); };
  let shown=0;
  document.querySelectorAll('.fleet-row, article.rc').forEach(function(el){
    const ok=(!st||el.dataset.status===st)&&(!ly||el.dataset.layer===ly)&&hit(el.dataset.nodes);
    el.classList.toggle('hidden',!ok);
  });
  document.querySelectorAll('#stacks .node').forEach(function(el){
    const ok=(!st||el.dataset.status===st)&&hit(el.dataset.node);
    el.classList.toggle('hidden',!ok); if(ok) shown++;
    el.querySelectorAll('.layer').forEach(function(l){ l.classList.toggle('dim', !!ly && l.dataset.layer!==ly); });
  });
  document.getElementById('f-count').textContent=shown+' nodes shown';
  drawAll();
}
['f-status','f-layer','f-node'].forEach(function(id){ document.getElementById(id).addEventListener('input',filter); });
const more=document.getElementById('other-stacks');
if(more) more.addEventListener('toggle',function(){ more.querySelectorAll('.node').forEach(arrows); });
window.addEventListener('resize',drawAll);
filter();
document.documentElement.dataset.renderMs=String(Math.round(performance.now()));
})();
