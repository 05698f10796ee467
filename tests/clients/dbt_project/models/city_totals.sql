{{ config(materialized='table', distributed_by=['city'], buckets=1,
          properties={'replication_num': '1'}) }}
select city, count(*) as orders, sum(amount) as total
from {{ ref('stg_orders') }}
group by city
